// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// One RC connection: setup, teardown, the send queue and the control
// messages.  Why the numbers (Documentation/dpi.md):
//  * iWARP has no RNR retry, so a Send that finds no receive kills the
//    connection: every message that can arrive has a receive reserved for it
//    before anything can trigger it (base_recvs, plus N + 2 per ring);
//  * WRs are unsignaled except every 16th control message, each seg Send and
//    at least every sq_depth/4 posts; an RC send queue completes in order,
//    so one completion retires everything posted before it.
#include "conn.hpp"

#include "buffers.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sched.h>
#include <thread>

namespace dpi::detail
{

using proto::Msg;
using proto::Type;

Conn::Conn(Counters &counters, DeathHandler on_death, int peer, std::string desc)
    : counters_(counters), on_death_(std::move(on_death)), peer_(peer), desc_(std::move(desc))
{
}

Conn::~Conn()
{
	(void)teardown();
}

void Conn::open(CmIdPtr id, ibv_pd *pd)
{
	id_ = std::move(id);
	id_->context = this;
	pd_ = pd;
	ibv_context *verbs = id_->verbs;
	ibv_device_attr da{};
	if (ibv_query_device(verbs, &da) == 0) {
		rd_atom_ = static_cast<uint8_t>(std::clamp(std::min(da.max_qp_rd_atom, da.max_qp_init_rd_atom), 1, 16));
		atomics_ = da.atomic_cap != IBV_ATOMIC_NONE;
	}
	if (const char *dn = ibv_get_device_name(verbs->device))
		device_ = dn;
	rch_.reset(ibv_create_comp_channel(verbs));
	if (!rch_)
		fail_sys("ibv_create_comp_channel", errno);
	int fl = fcntl(rch_->fd, F_GETFL);
	fcntl(rch_->fd, F_SETFL, fl | O_NONBLOCK);
	rcq_.reset(ibv_create_cq(verbs, rq_depth, nullptr, rch_.get(), 0));
	scq_.reset(ibv_create_cq(verbs, sq_depth, nullptr, nullptr, 0));
	if (!rcq_ || !scq_)
		fail_sys("ibv_create_cq", errno);
	if (ibv_req_notify_cq(rcq_.get(), 0))
		fail_sys("ibv_req_notify_cq", errno);
	ibv_qp_init_attr qa{};
	qa.send_cq = scq_.get();
	qa.recv_cq = rcq_.get();
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = sq_depth;
	qa.cap.max_recv_wr = rq_depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_all = 0;
	if (qp_.create(id_.get(), pd_, &qa))
		fail_sys(desc_ + ": rdma_create_qp", errno);
	rbuf_ = alloc_touched(rq_depth * sizeof(Msg));
	sbuf_ = alloc_touched(msg_slots * sizeof(Msg));
	rmr_.reset(ibv_reg_mr(pd_, rbuf_.get(), rq_depth * sizeof(Msg), IBV_ACCESS_LOCAL_WRITE));
	smr_.reset(ibv_reg_mr(pd_, sbuf_.get(), msg_slots * sizeof(Msg), IBV_ACCESS_LOCAL_WRITE));
	if (!rmr_ || !smr_)
		fail_sys("ibv_reg_mr (message buffers)", errno);
	std::lock_guard<std::mutex> g(mu_);
	top_up_recvs();
}

CmIdPtr Conn::teardown() noexcept
{
	qp_.reset();
	if (id_)
		id_->context = nullptr;
	rmr_.reset();
	smr_.reset();
	rcq_.reset();
	scq_.reset();
	rch_.reset();
	return std::move(id_);
}

void Conn::end(const std::string &reason)
{
	{
		std::lock_guard<std::mutex> g(mu_);
		hosted_.clear();
		dead_ = true;
		if (why_.empty())
			why_ = reason;
	}
	cv_.notify_all();
}

void Conn::mark_dead(const std::string &reason)
{
	{
		std::lock_guard<std::mutex> g(mu_);
		if (dead_.load())
			return;
		why_ = reason;
		dead_ = true;
	}
	debug("conn ", ptr(this), " (", desc_, ") dead: ", reason);
	cv_.notify_all();
	if (on_death_)
		on_death_(*this);
}

std::string Conn::why() const
{
	std::lock_guard<std::mutex> g(mu_);
	return why_;
}

void Conn::check_alive()
{
	if (dead_.load()) {
		std::lock_guard<std::mutex> g(mu_);
		throw Error(Errc::connection_lost, desc_ + ": " + why_);
	}
}

// ---------------------------------------------------------------- receive side

void Conn::post_recv(uint64_t slot) const
{
	ibv_sge sge{reinterpret_cast<uint64_t>(rslot(slot)), sizeof(Msg), rmr_->lkey};
	ibv_recv_wr wr{};
	ibv_recv_wr *bad = nullptr;
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (int rc = ibv_post_recv(qp_.get(), &wr, &bad))
		fail_sys("ibv_post_recv", rc);
}

void Conn::top_up_recvs()
{
	while (recvs_posted_ < recvs_reserved_)
		post_recv(recvs_posted_++);
}

void Conn::reserve_recvs(uint32_t n)
{
	std::lock_guard<std::mutex> g(mu_);
	if (recvs_reserved_ + n > rq_depth)
		throw Error(Errc::resources, desc_ + ": too many rings on one connection (receive queue of " +
		                                     std::to_string(rq_depth) + " is full)");
	recvs_reserved_ += n;
	top_up_recvs();
}

void Conn::drain_recvs(const std::function<void(const Msg &)> &handle)
{
	ibv_cq *cq = nullptr;
	void *ctx = nullptr;
	if (ibv_get_cq_event(rch_.get(), &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
	}
	std::array<ibv_wc, 16> wc{};
	int k = 0;
	while ((k = ibv_poll_cq(rcq_.get(), static_cast<int>(wc.size()), wc.data())) > 0) {
		for (int j = 0; j < k; ++j) {
			if (wc[j].status != IBV_WC_SUCCESS) {
				{ // a failed send is the likelier cause: report that
					std::lock_guard<std::mutex> g(smu_);
					poll_send_locked();
				}
				mark_dead(std::string("receive failed: ") + ibv_wc_status_str(wc[j].status));
				continue;
			}
			Msg m = *rslot(wc[j].wr_id);
			try {
				if (!dead_.load())
					post_recv(wc[j].wr_id);
				if (wc[j].byte_len != sizeof(Msg) || m.magic != proto::magic)
					throw Error(Errc::protocol, desc_ + " sent a malformed message");
				received_++;
				handle(m);
			} catch (const std::exception &e) {
				mark_dead(e.what());
			}
		}
	}
}

void Conn::complete(const Msg &reply)
{
	if (static_cast<Type>(reply.type) == Type::joined && reply.status == 0) {
		// room for this ring's credits (and a seg_ack and closed) before
		// anyone can send them
		reserve_recvs(reply.nseg + 2);
		std::lock_guard<std::mutex> g(mu_);
		credits_[reply.ring] = 0;
	}
	{
		std::lock_guard<std::mutex> g(mu_);
		auto it = pending_.find(reply.req_id);
		if (it != pending_.end()) {
			it->second.done = true;
			it->second.reply = reply;
		}
	}
	cv_.notify_all();
}

void Conn::add_credits(uint64_t ring, uint64_t n)
{
	{
		std::lock_guard<std::mutex> g(mu_);
		auto it = credits_.find(ring);
		if (it == credits_.end())
			throw Error(Errc::protocol, desc_ + " returned credit for unknown ring");
		it->second += n;
	}
	cv_.notify_all();
}

uint64_t Conn::take_credits(uint64_t ring, Deadline deadline, const std::function<void()> &on_stall)
{
	bool stalled = false;
	std::unique_lock<std::mutex> g(mu_);
	for (;;) {
		auto &returned = credits_[ring];
		if (returned)
			return std::exchange(returned, 0);
		if (dead_.load())
			throw Error(Errc::connection_lost, desc_ + ": " + why_);
		if (!stalled) {
			stalled = true;
			on_stall();
		}
		if (deadline == Deadline::max())
			cv_.wait(g);
		else if (cv_.wait_until(g, deadline) == std::cv_status::timeout)
			return 0;
	}
}

void Conn::add_hosted(const std::shared_ptr<Ring> &r)
{
	std::lock_guard<std::mutex> g(mu_);
	hosted_[r->id] = r;
}

std::shared_ptr<Ring> Conn::hosted(uint64_t ring) const
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = hosted_.find(ring);
	return it == hosted_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Ring>> Conn::hosted_rings() const
{
	std::lock_guard<std::mutex> g(mu_);
	std::vector<std::shared_ptr<Ring>> v;
	v.reserve(hosted_.size());
	for (const auto &[id, r] : hosted_)
		v.push_back(r);
	return v;
}

// ---------------------------------------------------------------- send side

void Conn::poll_send_locked()
{
	std::array<ibv_wc, 16> wc{};
	int n = 0;
	while ((n = ibv_poll_cq(scq_.get(), static_cast<int>(wc.size()), wc.data())) > 0) {
		for (int i = 0; i < n; ++i) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				std::string r = std::string("work request failed: ") + ibv_wc_status_str(wc[i].status);
				debug("conn ", ptr(this), " send wc ", std::to_string(wc[i].wr_id), ": ", r, " opcode ",
				      std::to_string(wc[i].opcode));
				// mark_dead takes mu_, never smu_: safe here
				mark_dead(r);
				continue;
			}
			completed_ = std::max<uint64_t>(completed_, wc[i].wr_id);
			if (result_wanted_.erase(wc[i].wr_id))
				result_done_.insert(wc[i].wr_id);
		}
	}
}

uint64_t Conn::post_locked(ibv_send_wr &wr, bool signal, int *post_err)
{
	check_alive();
	while (posted_ - completed_ >= sq_depth - 1) {
		poll_send_locked();
		check_alive();
		if (posted_ - completed_ >= sq_depth - 1)
			sched_yield();
	}
	uint64_t seq = ++posted_;
	wr.wr_id = seq;
	bool sig = signal || seq - last_signaled_ >= sq_depth / 4;
	if (sig) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		last_signaled_ = seq;
	}
	counters_.posted(sig);
	ibv_send_wr *bad = nullptr;
	if (int rc = ibv_post_send(qp_.get(), &wr, &bad)) {
		--posted_;
		if (post_err) {
			*post_err = rc;
			return 0;
		}
		fail_sys(desc_ + ": ibv_post_send", rc);
	}
	return seq;
}

uint64_t Conn::send_msg(const Msg &m, bool force_signal)
{
	std::lock_guard<std::mutex> g(smu_);
	uint64_t slot = nmsgs_ % msg_slots;
	while (completed_ < slot_seq_[slot]) {
		poll_send_locked();
		check_alive();
		if (completed_ < slot_seq_[slot])
			sched_yield();
	}
	*sslot(slot) = m;
	ibv_sge sge{reinterpret_cast<uint64_t>(sslot(slot)), sizeof(Msg), smr_->lkey};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	// Every 16th message is signaled, so a slot reused 64 messages later
	// always has a signaled completion after it.
	bool sig = force_signal || nmsgs_ % 16 == 15;
	uint64_t seq = post_locked(wr, sig);
	slot_seq_[slot] = seq;
	++nmsgs_;
	return seq;
}

uint64_t Conn::post_rdma(ibv_wr_opcode opcode, const void *local, uint32_t lkey, size_t len, uint64_t raddr,
                         uint32_t rkey, bool signal)
{
	ibv_sge sge{reinterpret_cast<uint64_t>(local), static_cast<uint32_t>(len), lkey};
	ibv_send_wr wr{};
	wr.opcode = opcode;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	std::lock_guard<std::mutex> g(smu_);
	return post_locked(wr, signal);
}

uint64_t Conn::write(const void *local, uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, bool signal)
{
	return post_rdma(IBV_WR_RDMA_WRITE, local, lkey, len, raddr, rkey, signal);
}

uint64_t Conn::read(void *local, uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey)
{
	return post_rdma(IBV_WR_RDMA_READ, local, lkey, len, raddr, rkey, true);
}

uint64_t Conn::fetch_add(void *local, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t add, int &post_err)
{
	ibv_sge sge{reinterpret_cast<uint64_t>(local), sizeof(uint64_t), lkey};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = add;
	post_err = 0;
	std::lock_guard<std::mutex> g(smu_);
	uint64_t seq = post_locked(wr, true, &post_err);
	if (seq)
		result_wanted_.insert(seq);
	return seq;
}

void Conn::wait_send(const std::function<bool()> &done, Deadline deadline)
{
	for (unsigned spin = 0;; ++spin) {
		{
			std::lock_guard<std::mutex> g(smu_);
			poll_send_locked();
			if (done())
				return;
		}
		check_alive();
		if (Clock::now() > deadline)
			throw Error(Errc::timeout, desc_ + ": work request not completed in time");
		if (spin < 200)
			sched_yield();
		else
			std::this_thread::sleep_for(std::chrono::microseconds(50));
	}
}

void Conn::wait_result(uint64_t seq, Deadline deadline)
{
	wait_send([&] { return result_done_.erase(seq) != 0; }, deadline);
}

void Conn::wait_done(uint64_t seq, Deadline deadline)
{
	wait_send([&] { return completed_ >= seq; }, deadline);
}

Msg Conn::request(Msg m, std::chrono::milliseconds timeout, uint64_t *seq_out, bool signal)
{
	auto deadline = deadline_after(timeout);
	uint32_t rid = 0;
	{
		std::unique_lock<std::mutex> g(mu_);
		auto room = [&] { return inflight_ < max_requests || dead_.load(); };
		if (deadline == Deadline::max())
			cv_.wait(g, room);
		else if (!cv_.wait_until(g, deadline, room))
			throw Error(Errc::timeout, desc_ + ": too many requests in flight");
		if (dead_.load())
			throw Error(Errc::connection_lost, desc_ + ": " + why_);
		++inflight_;
		rid = next_req_++;
		if (next_req_ == 0)
			next_req_ = 1;
		pending_[rid] = Pending{};
	}
	auto finish = [&] {
		std::lock_guard<std::mutex> g(mu_);
		pending_.erase(rid);
		--inflight_;
		cv_.notify_all();
	};
	m.req_id = rid;
	try {
		uint64_t s = send_msg(m, signal);
		if (seq_out)
			*seq_out = s;
	} catch (...) {
		finish();
		throw;
	}
	std::unique_lock<std::mutex> g(mu_);
	auto ready = [&] { return pending_[rid].done || dead_.load(); };
	bool ok = true;
	if (deadline == Deadline::max())
		cv_.wait(g, ready);
	else
		ok = cv_.wait_until(g, deadline, ready);
	Msg reply = pending_[rid].reply;
	bool done = pending_[rid].done;
	pending_.erase(rid);
	--inflight_;
	cv_.notify_all();
	if (done) {
		if (reply.status != 0)
			throw Error(static_cast<Errc>(reply.status), reply.get_text());
		return reply;
	}
	if (!ok)
		throw Error(Errc::timeout, desc_ + ": no reply within " + std::to_string(timeout.count()) + " ms");
	throw Error(Errc::connection_lost, desc_ + ": " + why_);
}

} // namespace dpi::detail
