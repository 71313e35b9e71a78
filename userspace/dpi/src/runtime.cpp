// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// libdpi runtime: connection pool over rdma_cm, the progress thread, buffers
// hosted by this node, appenders, consumers and regions.
//
// Data path of an append buffer (see Documentation/dpi.md for the why):
//  * every source owns a private ring of N segments in the owner's memory;
//  * records are staged by memcpy into a pre-registered block (or, at or
//    above the measured critical size, registered in place) and RDMA-written
//    into the current segment, unsignaled;
//  * a sealed segment is announced by a `seg` Send on the same connection.
//    RC ordering makes the owner see the Send only after the Writes before it
//    were placed, so no footer polling, atomics or immediate data are needed;
//  * the consumer frees a segment with a `credit` Send back to the source;
//    a source without credit blocks: backpressure, never overwrite.
#include "runtime.hpp"
#include "proto.hpp"
#include "ring.hpp"

#include <dpi/dpi.hpp>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

namespace dpi::detail
{

using Clock = std::chrono::steady_clock;
using proto::Msg;
using proto::Type;

namespace
{

constexpr uint32_t sq_depth = 512;
constexpr uint32_t rq_depth = 1024;
constexpr uint32_t base_recvs = 64;
constexpr uint32_t msg_slots = 64;
constexpr uint32_t max_requests = 32;
constexpr uint32_t staging_blocks = 4;
constexpr size_t zero_copy_piece = size_t{256} * 1024;
constexpr size_t bounce_size = size_t{256} * 1024;

[[noreturn]] void fail_sys(const std::string &what, int err)
{
	throw Error(Errc::system, what + ": " + std::strerror(err));
}

struct MrDeleter {
	void operator()(ibv_mr *m) const noexcept
	{
		if (m)
			ibv_dereg_mr(m);
	}
};
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;

struct FreeDeleter {
	void operator()(std::byte *p) const noexcept { std::free(p); }
};
using MemPtr = std::unique_ptr<std::byte, FreeDeleter>;

MemPtr alloc_touched(size_t n)
{
	size_t sz = (n + 4095) & ~size_t{4095};
	void *p = std::aligned_alloc(4096, sz ? sz : 4096);
	if (!p)
		throw Error(Errc::resources, "cannot allocate " + std::to_string(n) + " bytes");
	std::memset(p, 0, sz); // resident pages register much faster (thesis 4.4)
	return MemPtr(static_cast<std::byte *>(p));
}

std::chrono::time_point<Clock> deadline_after(std::chrono::milliseconds ms)
{
	if (ms.count() <= 0)
		return std::chrono::time_point<Clock>::max();
	return Clock::now() + ms;
}

struct ConnPriv {
	uint32_t magic;
	int32_t node;
};

bool debug_on()
{
	static const bool on = [] {
		const char *d = std::getenv("DPI_DEBUG");
		return d && *d && *d != '0';
	}();
	return on;
}

template <class... T> void debug(const T &...parts)
{
	if (!debug_on())
		return;
	std::string line = "dpi[" + std::to_string(getpid()) + "]: ";
	((line += parts), ...);
	line += "\n";
	(void)!::write(2, line.data(), line.size());
}

std::string ptr(const void *p)
{
	char b[32];
	std::snprintf(b, sizeof b, "%p", p);
	return b;
}

std::string node_desc(const NodeAddress &a)
{
	return "node " + std::to_string(a.id) + " (" + a.host + ":" + std::to_string(a.port) + ")";
}

} // namespace

std::vector<CostSample> measure_costs(ibv_pd *pd, int rounds)
{
	// Sizes 4 KiB .. 8 MiB.  All sizes are timed once per round, rounds
	// repeated, and each size keeps the median of its rounds: a guest that is
	// descheduled or a host that is busy for a moment spoils single samples,
	// not a whole size.  The rounds sweep the sizes in alternating directions
	// and alternate which of the two operations goes first, so slow drift
	// and cache warmth do not favour one side.  One untimed pass first
	// faults in the code paths (provider, kernel pinning).
	std::vector<size_t> sizes;
	for (size_t size = 4096; size <= (8U << 20); size *= 2)
		sizes.push_back(size);
	MemPtr src = alloc_touched(sizes.back());
	MemPtr dst = alloc_touched(sizes.back());
	auto reg_once = [&](size_t size) {
		auto t0 = Clock::now();
		ibv_mr *mr = ibv_reg_mr(pd, src.get(), size, IBV_ACCESS_LOCAL_WRITE);
		if (!mr)
			fail_sys("ibv_reg_mr while measuring the critical size", errno);
		ibv_dereg_mr(mr);
		return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
	};
	auto copy_once = [&](size_t size) {
		auto t0 = Clock::now();
		std::memcpy(dst.get(), src.get(), size);
		return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
	};
	for (size_t size : sizes) {
		(void)reg_once(size);
		(void)copy_once(size);
	}
	rounds = std::max(rounds, 1);
	std::vector<std::vector<CostSample>> all(static_cast<size_t>(rounds));
	for (int r = 0; r < rounds; ++r) {
		auto &round = all[static_cast<size_t>(r)];
		round.resize(sizes.size());
		for (size_t k = 0; k < sizes.size(); ++k) {
			size_t i = (r % 2) ? sizes.size() - 1 - k : k;
			double reg = 0;
			double copy = 0;
			if ((r + static_cast<int>(i)) % 2) {
				reg = reg_once(sizes[i]);
				copy = copy_once(sizes[i]);
			} else {
				copy = copy_once(sizes[i]);
				reg = reg_once(sizes[i]);
			}
			round[i] = {sizes[i], reg, copy};
		}
	}
	return median_costs(all);
}

std::vector<CostSample> median_costs(const std::vector<std::vector<CostSample>> &rounds)
{
	std::vector<CostSample> out;
	if (rounds.empty())
		return out;
	auto median = [](std::vector<double> v) {
		std::sort(v.begin(), v.end());
		size_t n = v.size();
		return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	};
	for (size_t i = 0; i < rounds.front().size(); ++i) {
		std::vector<double> reg;
		std::vector<double> copy;
		for (const auto &round : rounds) {
			if (i < round.size() && round[i].size == rounds.front()[i].size) {
				reg.push_back(round[i].reg_us);
				copy.push_back(round[i].copy_us);
			}
		}
		out.push_back({rounds.front()[i].size, median(reg), median(copy)});
	}
	return out;
}

size_t critical_from(const std::vector<CostSample> &samples)
{
	// Choosing threshold t means copying below t and registering from t
	// on.  Against always copying, registering a size s costs
	// ln(reg(s)/copy(s)) (relative, so every size counts alike whatever its
	// magnitude).  Pick the t that minimises the sum of that over all sizes
	// >= t; past the table (copy everything) the sum is 0.  One size spoiled
	// by noise only adds one term, so it cannot drag the threshold to the
	// end of the table the way a "wins at every larger size" rule does.
	// Ties go to the larger size: copying needs no pinning.
	size_t crit = samples.empty() ? 0 : samples.back().size * 2;
	double best = 0;
	double suffix = 0;
	for (size_t i = samples.size(); i-- > 0;) {
		double reg = std::max(samples[i].reg_us, 1e-3);
		double copy = std::max(samples[i].copy_us, 1e-3);
		suffix += std::log(reg / copy);
		if (suffix < best - 1e-9) {
			best = suffix;
			crit = samples[i].size;
		}
	}
	return crit;
}

class Runtime;

struct Pending {
	bool done = false;
	Msg reply{};
};

struct SourceShared { // client side of one ring: credits returned by the owner
	uint64_t returned = 0;
};

struct Ring;

struct Conn {
	Runtime *rt = nullptr;
	bool outgoing = false;
	int peer = -1;
	std::string desc;
	rdma_cm_id *id = nullptr;
	ibv_pd *pd = nullptr;
	ibv_comp_channel *rch = nullptr;
	ibv_cq *rcq = nullptr;
	ibv_cq *scq = nullptr;
	MemPtr rbuf;
	MrPtr rmr;
	MemPtr sbuf;
	MrPtr smr;
	uint8_t rd_atom = 1;

	// send side, under smu
	std::mutex smu;
	uint64_t posted = 0;
	uint64_t last_signaled = 0;
	uint64_t completed = 0;
	uint64_t nmsgs = 0;
	std::array<uint64_t, msg_slots> slot_seq{};

	// recv side (progress thread, and reservations under mu)
	uint32_t recvs_posted = 0;
	uint32_t recvs_reserved = base_recvs;

	// state, pending requests, client rings; under mu
	std::mutex mu;
	std::condition_variable cv;
	std::atomic<bool> up{false};
	std::atomic<bool> dead{false};
	std::atomic<uint64_t> received{0}; // messages from the peer
	bool torn_down = false;
	std::string why;
	uint32_t next_req = 1;
	uint32_t inflight = 0;
	std::map<uint32_t, Pending> pending;
	std::map<uint64_t, SourceShared> sources;
	std::map<uint64_t, std::shared_ptr<Ring>> server_rings;

	[[nodiscard]] Msg *rslot(uint64_t i) const { return reinterpret_cast<Msg *>(rbuf.get()) + i; }
	[[nodiscard]] Msg *sslot(uint64_t i) const { return reinterpret_cast<Msg *>(sbuf.get()) + i; }

	void mark_dead(const std::string &reason);
	void check_alive()
	{
		if (dead.load()) {
			std::lock_guard<std::mutex> g(mu);
			throw Error(Errc::connection_lost, desc + ": " + why);
		}
	}
	void post_recv(uint64_t slot) const
	{
		ibv_sge sge{reinterpret_cast<uint64_t>(rslot(slot)), sizeof(Msg), rmr->lkey};
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;
		wr.wr_id = slot;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (int rc = ibv_post_recv(id->qp, &wr, &bad))
			fail_sys("ibv_post_recv", rc);
	}
	// Posts recvs up to the reservation.  Called with mu held.
	void top_up_recvs()
	{
		while (recvs_posted < recvs_reserved)
			post_recv(recvs_posted++);
	}
	void reserve_recvs(uint32_t n)
	{
		std::lock_guard<std::mutex> g(mu);
		if (recvs_reserved + n > rq_depth)
			throw Error(Errc::resources, desc + ": too many rings on one connection (receive queue of " +
			                                     std::to_string(rq_depth) + " is full)");
		recvs_reserved += n;
		top_up_recvs();
	}

	void poll_send_locked();
	uint64_t post_locked(ibv_send_wr &wr, bool signal);
	// One RDMA Write or Read of a single local buffer (the two differ only in opcode).
	uint64_t post_rdma(ibv_wr_opcode opcode, const void *local, uint32_t lkey, size_t len, uint64_t raddr,
	                   uint32_t rkey, bool signal);
	uint64_t send_msg(const Msg &m, bool force_signal = false);
	uint64_t write(const void *local, uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, bool signal);
	uint64_t read(void *local, uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey);
	void wait_done(uint64_t seq, std::chrono::time_point<Clock> deadline);
	Msg request(Msg m, std::chrono::milliseconds timeout, uint64_t *seq_out = nullptr, bool signal = false);
};

struct Ring {
	uint64_t id = 0;
	uint32_t index = 0;
	int node = -1;
	std::weak_ptr<Conn> conn;
	MemPtr mem;
	MrPtr mr;
	ring::ReaderState rd;
	SourceState state = SourceState::open;
	std::string reason;
	uint64_t records = 0;
	Ring(size_t seg, uint32_t n) : rd(seg, n) {}
};

struct Buffer {
	std::string name;
	uint64_t id = 0;
	BufferOptions opts;
	std::vector<std::shared_ptr<Ring>> rings;
	MemPtr region;
	MrPtr region_mr;
	bool has_consumer = false;
};

class Runtime final : public Node
{
public:
	explicit Runtime(Options o);
	~Runtime() override { shutdown(); }

	void init();
	[[nodiscard]] int id() const noexcept override { return opts_.node_id; }
	[[nodiscard]] const ClusterSpec &spec() const noexcept override { return opts_.spec; }
	size_t critical_size() override;
	[[nodiscard]] Stats stats() const override;
	void create_buffer(const std::string &name, int owner, const BufferOptions &opts) override;
	int lookup(const std::string &name) override;
	std::unique_ptr<Appender> appender(const std::string &name) override;
	std::unique_ptr<Consumer> consumer(const std::string &name, std::chrono::milliseconds wait) override;
	std::unique_ptr<Region> region(const std::string &name) override;
	void shutdown() override;

	std::shared_ptr<Conn> conn_to(int node);
	Msg call(int node, const Msg &m, std::shared_ptr<Conn> *used = nullptr);
	ibv_pd *pd_for(ibv_context *ctx);
	void setup_qp(Conn &c, rdma_cm_id *cid);
	void dispatch(const std::shared_ptr<Conn> &c, const Msg &m);
	Msg serve(const std::shared_ptr<Conn> &c, const Msg &m);
	void conn_died(Conn &c);
	void measure(ibv_pd *pd);

	Options opts_;
	std::chrono::milliseconds op_timeout() const { return opts_.op_timeout; }

	// statistics
	std::atomic<uint64_t> st_appends{0}, st_bytes{0}, st_copied{0}, st_zero{0}, st_sealed{0}, st_stalls{0},
	        st_signaled{0}, st_posted{0};

	// buffers hosted here, and the directory if this node holds it
	std::mutex bufmu;
	std::condition_variable bufcv;
	std::map<std::string, std::shared_ptr<Buffer>> buffers;
	std::map<std::string, int> directory;
	std::map<std::string, int> known_owner; // cache of create/lookup results
	uint64_t next_id = 1;

private:
	std::shared_ptr<Conn> connect(const NodeAddress &a);
	void progress();
	rdma_cm_id *handle_cm(rdma_cm_event *ev);
	void watch(Conn &c) const;

	std::mutex mu_; // pools, pds
	std::mutex connect_mu_;
	std::map<int, std::shared_ptr<Conn>> out_;
	std::vector<std::shared_ptr<Conn>> all_;
	std::map<ibv_context *, ibv_pd *> pds_;
	std::mutex crit_mu_;
	size_t critical_ = 0;

	rdma_event_channel *ech_ = nullptr;
	rdma_cm_id *listen_id_ = nullptr;
	int epfd_ = -1;
	int stopfd_ = -1;
	std::thread thread_;
	std::atomic<bool> stopping_{false};
	bool shut_ = false;
};

// ---------------------------------------------------------------- Conn

void Conn::mark_dead(const std::string &reason)
{
	{
		std::lock_guard<std::mutex> g(mu);
		if (dead.load())
			return;
		why = reason;
		dead = true;
	}
	debug("conn ", ptr(this), " (", desc, ") dead: ", reason);
	cv.notify_all();
	rt->conn_died(*this);
}

void Conn::poll_send_locked()
{
	std::array<ibv_wc, 16> wc{};
	int n = 0;
	while ((n = ibv_poll_cq(scq, static_cast<int>(wc.size()), wc.data())) > 0) {
		for (int i = 0; i < n; ++i) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				std::string r = std::string("work request failed: ") + ibv_wc_status_str(wc[i].status);
				debug("conn ", ptr(this), " send wc ", std::to_string(wc[i].wr_id), ": ", r, " opcode ",
				      std::to_string(wc[i].opcode));
				// mark_dead takes mu, never smu: safe here
				mark_dead(r);
				continue;
			}
			completed = std::max<uint64_t>(completed, wc[i].wr_id);
		}
	}
}

uint64_t Conn::post_locked(ibv_send_wr &wr, bool signal)
{
	check_alive();
	while (posted - completed >= sq_depth - 1) {
		poll_send_locked();
		check_alive();
		if (posted - completed >= sq_depth - 1)
			sched_yield();
	}
	uint64_t seq = ++posted;
	wr.wr_id = seq;
	if (signal || seq - last_signaled >= sq_depth / 4) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		last_signaled = seq;
		rt->st_signaled++;
	}
	rt->st_posted++;
	ibv_send_wr *bad = nullptr;
	if (int rc = ibv_post_send(id->qp, &wr, &bad)) {
		--posted;
		fail_sys(desc + ": ibv_post_send", rc);
	}
	return seq;
}

uint64_t Conn::send_msg(const Msg &m, bool force_signal)
{
	std::lock_guard<std::mutex> g(smu);
	uint64_t slot = nmsgs % msg_slots;
	while (completed < slot_seq[slot]) {
		poll_send_locked();
		check_alive();
		if (completed < slot_seq[slot])
			sched_yield();
	}
	*sslot(slot) = m;
	ibv_sge sge{reinterpret_cast<uint64_t>(sslot(slot)), sizeof(Msg), smr->lkey};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	// Every 16th message is signaled, so a slot reused 64 messages later
	// always has a signaled completion after it.
	bool sig = force_signal || nmsgs % 16 == 15;
	uint64_t seq = post_locked(wr, sig);
	slot_seq[slot] = seq;
	++nmsgs;
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
	std::lock_guard<std::mutex> g(smu);
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

void Conn::wait_done(uint64_t seq, std::chrono::time_point<Clock> deadline)
{
	for (unsigned spin = 0;; ++spin) {
		{
			std::lock_guard<std::mutex> g(smu);
			poll_send_locked();
			if (completed >= seq)
				return;
		}
		check_alive();
		if (Clock::now() > deadline)
			throw Error(Errc::timeout, desc + ": work request not completed in time");
		if (spin < 200)
			sched_yield();
		else
			std::this_thread::sleep_for(std::chrono::microseconds(50));
	}
}

Msg Conn::request(Msg m, std::chrono::milliseconds timeout, uint64_t *seq_out, bool signal)
{
	auto deadline = deadline_after(timeout);
	uint32_t rid = 0;
	{
		std::unique_lock<std::mutex> g(mu);
		auto room = [&] { return inflight < max_requests || dead.load(); };
		if (deadline == std::chrono::time_point<Clock>::max())
			cv.wait(g, room);
		else if (!cv.wait_until(g, deadline, room))
			throw Error(Errc::timeout, desc + ": too many requests in flight");
		if (dead.load())
			throw Error(Errc::connection_lost, desc + ": " + why);
		++inflight;
		rid = next_req++;
		if (next_req == 0)
			next_req = 1;
		pending[rid] = Pending{};
	}
	auto finish = [&] {
		std::lock_guard<std::mutex> g(mu);
		pending.erase(rid);
		--inflight;
		cv.notify_all();
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
	std::unique_lock<std::mutex> g(mu);
	auto ready = [&] { return pending[rid].done || dead.load(); };
	bool ok = true;
	if (deadline == std::chrono::time_point<Clock>::max())
		cv.wait(g, ready);
	else
		ok = cv.wait_until(g, deadline, ready);
	Msg reply = pending[rid].reply;
	bool done = pending[rid].done;
	pending.erase(rid);
	--inflight;
	cv.notify_all();
	if (done) {
		if (reply.status != 0)
			throw Error(static_cast<Errc>(reply.status), reply.get_text());
		return reply;
	}
	if (!ok)
		throw Error(Errc::timeout, desc + ": no reply within " + std::to_string(timeout.count()) + " ms");
	throw Error(Errc::connection_lost, desc + ": " + why);
}

// ---------------------------------------------------------------- Runtime

Runtime::Runtime(Options o) : opts_(std::move(o)) {}

void Runtime::init()
{
	if (opts_.node_id >= 0)
		(void)opts_.spec.at(opts_.node_id);
	if (const char *cs = std::getenv("DPI_CRITICAL_SIZE"); cs && *cs && opts_.critical_size == 0)
		opts_.critical_size = std::strtoull(cs, nullptr, 0);
	critical_ = opts_.critical_size;

	ech_ = rdma_create_event_channel();
	if (!ech_)
		fail_sys("rdma_create_event_channel (is rdma_ucm loaded?)", errno);
	int fl = fcntl(ech_->fd, F_GETFL);
	fcntl(ech_->fd, F_SETFL, fl | O_NONBLOCK);
	epfd_ = epoll_create1(EPOLL_CLOEXEC);
	stopfd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (epfd_ < 0 || stopfd_ < 0)
		fail_sys("epoll/eventfd", errno);
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.ptr = nullptr;
	epoll_ctl(epfd_, EPOLL_CTL_ADD, ech_->fd, &ev);
	ev.data.ptr = &stopfd_;
	epoll_ctl(epfd_, EPOLL_CTL_ADD, stopfd_, &ev);

	if (opts_.node_id >= 0) {
		const NodeAddress &me = opts_.spec.at(opts_.node_id);
		if (rdma_create_id(ech_, &listen_id_, nullptr, RDMA_PS_TCP))
			fail_sys("rdma_create_id", errno);
		rdma_addrinfo hints{};
		rdma_addrinfo *res = nullptr;
		hints.ai_flags = RAI_PASSIVE;
		hints.ai_port_space = RDMA_PS_TCP;
		std::string port = std::to_string(me.port);
		if (rdma_getaddrinfo(me.host.c_str(), port.c_str(), &hints, &res) || !res)
			throw Error(Errc::spec_error, "cannot resolve own address " + me.host);
		int rc = rdma_bind_addr(listen_id_, res->ai_src_addr);
		int err = errno;
		rdma_freeaddrinfo(res);
		if (rc)
			fail_sys("cannot bind " + node_desc(me) + " (is another process running as node " +
			                 std::to_string(me.id) + "?)",
			         err);
		if (!listen_id_->verbs)
			throw Error(Errc::system, node_desc(me) + ": address " + me.host +
			                                  " is not on an RDMA device (rdma link show?)");
		std::string dev = ibv_get_device_name(listen_id_->verbs->device);
		if (!me.device.empty() && me.device != dev)
			throw Error(Errc::spec_error,
			            node_desc(me) + " is on RDMA device " + dev + ", the spec says " + me.device);
		if (rdma_listen(listen_id_, 64))
			fail_sys("rdma_listen on " + node_desc(me), errno);
		measure(pd_for(listen_id_->verbs));
	}
	thread_ = std::thread([this] { progress(); });
}

void Runtime::measure(ibv_pd *pd)
{
	std::lock_guard<std::mutex> g(crit_mu_);
	if (critical_)
		return;
	critical_ = critical_from(measure_costs(pd, kMeasureRounds));
}

size_t Runtime::critical_size()
{
	{
		std::lock_guard<std::mutex> g(crit_mu_);
		if (critical_)
			return critical_;
	}
	ibv_pd *pd = nullptr;
	{
		std::lock_guard<std::mutex> g(mu_);
		if (!pds_.empty())
			pd = pds_.begin()->second;
	}
	if (!pd) { // anonymous client before any connection: use the first device
		int n = 0;
		ibv_device **list = ibv_get_device_list(&n);
		if (!list || n == 0) {
			if (list)
				ibv_free_device_list(list);
			throw Error(Errc::system, "no RDMA device to measure the critical size on");
		}
		ibv_context *ctx = ibv_open_device(list[0]);
		ibv_free_device_list(list);
		if (!ctx)
			fail_sys("ibv_open_device", errno);
		ibv_pd *tmp = ibv_alloc_pd(ctx);
		if (tmp) {
			try {
				measure(tmp);
			} catch (...) {
				ibv_dealloc_pd(tmp);
				ibv_close_device(ctx);
				throw;
			}
			ibv_dealloc_pd(tmp);
		}
		ibv_close_device(ctx);
	} else {
		measure(pd);
	}
	std::lock_guard<std::mutex> g(crit_mu_);
	return critical_;
}

Stats Runtime::stats() const
{
	Stats s;
	s.appends = st_appends;
	s.bytes_appended = st_bytes;
	s.copied_appends = st_copied;
	s.zero_copy_appends = st_zero;
	s.segments_sealed = st_sealed;
	s.credit_stalls = st_stalls;
	s.signaled_wrs = st_signaled;
	s.posted_wrs = st_posted;
	return s;
}

ibv_pd *Runtime::pd_for(ibv_context *ctx)
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = pds_.find(ctx);
	if (it != pds_.end())
		return it->second;
	ibv_pd *pd = ibv_alloc_pd(ctx);
	if (!pd)
		fail_sys("ibv_alloc_pd", errno);
	pds_[ctx] = pd;
	return pd;
}

void Runtime::setup_qp(Conn &c, rdma_cm_id *cid)
{
	c.rt = this;
	c.id = cid;
	cid->context = &c;
	c.pd = pd_for(cid->verbs);
	ibv_device_attr da{};
	if (ibv_query_device(cid->verbs, &da) == 0)
		c.rd_atom =
		        static_cast<uint8_t>(std::clamp(std::min(da.max_qp_rd_atom, da.max_qp_init_rd_atom), 1, 16));
	c.rch = ibv_create_comp_channel(cid->verbs);
	if (!c.rch)
		fail_sys("ibv_create_comp_channel", errno);
	int fl = fcntl(c.rch->fd, F_GETFL);
	fcntl(c.rch->fd, F_SETFL, fl | O_NONBLOCK);
	c.rcq = ibv_create_cq(cid->verbs, rq_depth, nullptr, c.rch, 0);
	c.scq = ibv_create_cq(cid->verbs, sq_depth, nullptr, nullptr, 0);
	if (!c.rcq || !c.scq)
		fail_sys("ibv_create_cq", errno);
	if (ibv_req_notify_cq(c.rcq, 0))
		fail_sys("ibv_req_notify_cq", errno);
	ibv_qp_init_attr qa{};
	qa.send_cq = c.scq;
	qa.recv_cq = c.rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = sq_depth;
	qa.cap.max_recv_wr = rq_depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_all = 0;
	if (rdma_create_qp(cid, c.pd, &qa))
		fail_sys(c.desc + ": rdma_create_qp", errno);
	c.rbuf = alloc_touched(rq_depth * sizeof(Msg));
	c.sbuf = alloc_touched(msg_slots * sizeof(Msg));
	c.rmr.reset(ibv_reg_mr(c.pd, c.rbuf.get(), rq_depth * sizeof(Msg), IBV_ACCESS_LOCAL_WRITE));
	c.smr.reset(ibv_reg_mr(c.pd, c.sbuf.get(), msg_slots * sizeof(Msg), IBV_ACCESS_LOCAL_WRITE));
	if (!c.rmr || !c.smr)
		fail_sys("ibv_reg_mr (message buffers)", errno);
	std::lock_guard<std::mutex> g(c.mu);
	c.top_up_recvs();
}

void Runtime::watch(Conn &c) const
{
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.ptr = &c;
	if (epoll_ctl(epfd_, EPOLL_CTL_ADD, c.rch->fd, &ev))
		fail_sys("epoll_ctl", errno);
}

namespace
{

// Waits on a private event channel for one event on a connecting id.
rdma_cm_event_type wait_cm(rdma_event_channel *ch, std::chrono::time_point<Clock> deadline, int &status)
{
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
		if (left <= 0)
			return static_cast<rdma_cm_event_type>(-1);
		pollfd p{ch->fd, POLLIN, 0};
		int r = ::poll(&p, 1, static_cast<int>(left));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		rdma_cm_event *ev = nullptr;
		if (rdma_get_cm_event(ch, &ev))
			continue;
		auto t = ev->event;
		status = ev->status;
		rdma_ack_cm_event(ev);
		return t;
	}
}

} // namespace

std::shared_ptr<Conn> Runtime::connect(const NodeAddress &a)
{
	auto c = std::make_shared<Conn>();
	c->rt = this;
	c->outgoing = true;
	c->peer = a.id;
	c->desc = node_desc(a);
	auto deadline = deadline_after(opts_.connect_timeout);
	rdma_event_channel *ch = rdma_create_event_channel();
	if (!ch)
		fail_sys("rdma_create_event_channel", errno);
	rdma_cm_id *cid = nullptr;
	auto cleanup = [&] {
		if (cid) {
			if (cid->qp)
				rdma_destroy_qp(cid);
			rdma_destroy_id(cid);
		}
		if (c->rcq)
			ibv_destroy_cq(c->rcq);
		if (c->scq)
			ibv_destroy_cq(c->scq);
		if (c->rch)
			ibv_destroy_comp_channel(c->rch);
		c->rmr.reset();
		c->smr.reset();
		rdma_destroy_event_channel(ch);
	};
	try {
		if (rdma_create_id(ch, &cid, nullptr, RDMA_PS_TCP))
			fail_sys("rdma_create_id", errno);
		rdma_addrinfo hints{};
		rdma_addrinfo *res = nullptr;
		hints.ai_port_space = RDMA_PS_TCP;
		std::string port = std::to_string(a.port);
		if (rdma_getaddrinfo(a.host.c_str(), port.c_str(), &hints, &res) || !res)
			throw Error(Errc::unreachable, c->desc + ": cannot resolve " + a.host);
		int rc = rdma_resolve_addr(cid, nullptr, res->ai_dst_addr, 2000);
		int err = errno;
		rdma_freeaddrinfo(res);
		if (rc)
			throw Error(Errc::unreachable, c->desc + ": rdma_resolve_addr: " + std::strerror(err));
		int status = 0;
		auto t = wait_cm(ch, deadline, status);
		if (t != RDMA_CM_EVENT_ADDR_RESOLVED)
			throw Error(Errc::unreachable,
			            c->desc + ": address resolution failed (" +
			                    (static_cast<int>(t) < 0 ? std::string("timeout") : rdma_event_str(t)) +
			                    "); no RDMA device routes there?");
		if (rdma_resolve_route(cid, 2000))
			throw Error(Errc::unreachable, c->desc + ": rdma_resolve_route: " + std::strerror(errno));
		t = wait_cm(ch, deadline, status);
		if (t != RDMA_CM_EVENT_ROUTE_RESOLVED)
			throw Error(Errc::unreachable, c->desc + ": route resolution failed");
		std::string dev = ibv_get_device_name(cid->verbs->device);
		if (!a.device.empty() && a.device != dev)
			throw Error(Errc::spec_error,
			            c->desc + " is reached through RDMA device " + dev + ", the spec says " + a.device);
		setup_qp(*c, cid);
		ConnPriv priv{proto::magic, opts_.node_id};
		rdma_conn_param p{};
		p.private_data = &priv;
		p.private_data_len = sizeof priv;
		p.responder_resources = c->rd_atom;
		p.initiator_depth = c->rd_atom;
		p.retry_count = 7;
		p.rnr_retry_count = 7;
		if (rdma_connect(cid, &p))
			throw Error(Errc::unreachable, c->desc + ": rdma_connect: " + std::strerror(errno));
		t = wait_cm(ch, deadline, status);
		if (t != RDMA_CM_EVENT_ESTABLISHED) {
			std::string why = static_cast<int>(t) < 0       ? "timed out"
			                  : t == RDMA_CM_EVENT_REJECTED ? "refused (is a dpi node running there?)"
			                                                : rdma_event_str(t);
			throw Error(Errc::unreachable, c->desc + ": connection " + why);
		}
		if (rdma_migrate_id(cid, ech_))
			fail_sys("rdma_migrate_id", errno);
		rdma_destroy_event_channel(ch);
		ch = nullptr;
	} catch (...) {
		if (ch)
			cleanup();
		throw;
	}
	c->up = true;
	{
		std::lock_guard<std::mutex> g(mu_);
		all_.push_back(c);
	}
	watch(*c);
	debug("conn ", ptr(c.get()), " to ", c->desc, " established, qp ", std::to_string(c->id->qp->qp_num));
	measure(c->pd);
	return c;
}

std::shared_ptr<Conn> Runtime::conn_to(int node)
{
	const NodeAddress &a = opts_.spec.at(node);
	std::lock_guard<std::mutex> cg(connect_mu_);
	{
		std::lock_guard<std::mutex> g(mu_);
		auto it = out_.find(node);
		if (it != out_.end() && !it->second->dead.load())
			return it->second;
	}
	auto c = connect(a);
	std::lock_guard<std::mutex> g(mu_);
	out_[node] = c;
	return c;
}

// A request to `node` through the pool.  A connection that dies before the
// peer ever answered on it is replaced once: seen on siw right after the
// peer restarted, where a fresh connection can fail before its first
// message arrives.  Every request type is safe to repeat then, because the
// peer never processed it or dropped what it made with the connection.
Msg Runtime::call(int node, const Msg &m, std::shared_ptr<Conn> *used)
{
	for (int attempt = 0;; ++attempt) {
		auto c = conn_to(node);
		try {
			Msg r = c->request(m, op_timeout());
			if (used)
				*used = c;
			return r;
		} catch (const Error &e) {
			if (e.code() != Errc::connection_lost || c->received.load() != 0 || attempt > 0)
				throw;
			debug("fresh connection to node ", std::to_string(node), " failed (", e.detail(),
			      "); retrying once");
		}
	}
}

void Runtime::conn_died(Conn &c)
{
	// A source that vanishes without closing aborts its rings; its flushed
	// segments stay consumable.
	std::vector<std::shared_ptr<Ring>> rings;
	{
		std::lock_guard<std::mutex> g(c.mu);
		for (auto &[k, r] : c.server_rings)
			rings.push_back(r);
	}
	{
		std::lock_guard<std::mutex> g(bufmu);
		for (auto &r : rings)
			if (r->state == SourceState::open) {
				r->state = SourceState::aborted;
				r->reason = "source " + c.desc + " disconnected before closing (" + c.why +
				            "); data it had not flushed is lost";
			}
	}
	bufcv.notify_all();
}

// Returns an id to destroy once the event is acknowledged.
rdma_cm_id *Runtime::handle_cm(rdma_cm_event *ev)
{
	auto *c = static_cast<Conn *>(ev->id->context);
	debug("cm event ", rdma_event_str(ev->event), " status ", std::to_string(ev->status), " conn ", ptr(c));
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST: {
		ConnPriv priv{};
		if (ev->param.conn.private_data && ev->param.conn.private_data_len >= sizeof priv)
			std::memcpy(&priv, ev->param.conn.private_data, sizeof priv);
		if (priv.magic != proto::magic) {
			rdma_reject(ev->id, nullptr, 0);
			return ev->id;
		}
		auto nc = std::make_shared<Conn>();
		nc->peer = priv.node;
		nc->desc = priv.node >= 0 ? "node " + std::to_string(priv.node) : std::string("an anonymous client");
		try {
			setup_qp(*nc, ev->id);
			rdma_conn_param p{};
			p.responder_resources = std::min<uint8_t>(nc->rd_atom, ev->param.conn.initiator_depth);
			p.initiator_depth = std::min<uint8_t>(nc->rd_atom, ev->param.conn.responder_resources);
			p.retry_count = 7;
			p.rnr_retry_count = 7;
			if (rdma_accept(ev->id, &p))
				fail_sys("rdma_accept", errno);
			{
				std::lock_guard<std::mutex> g(mu_);
				all_.push_back(nc);
			}
			watch(*nc);
		} catch (const std::exception &) {
			if (ev->id->qp)
				rdma_destroy_qp(ev->id);
			ev->id->context = nullptr;
			rdma_reject(ev->id, nullptr, 0);
			nc->rmr.reset();
			nc->smr.reset();
			if (nc->rcq)
				ibv_destroy_cq(nc->rcq);
			if (nc->scq)
				ibv_destroy_cq(nc->scq);
			if (nc->rch)
				ibv_destroy_comp_channel(nc->rch);
			nc->id = nullptr;
			return ev->id;
		}
		return nullptr;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c)
			c->up = true;
		return nullptr;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (c) {
			c->mark_dead("peer disconnected");
			rdma_disconnect(ev->id);
		}
		return nullptr;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (c)
			c->mark_dead(rdma_event_str(ev->event));
		return nullptr;
	default: return nullptr;
	}
}

void Runtime::progress()
{
	std::array<epoll_event, 16> evs{};
	while (!stopping_.load()) {
		int n = epoll_wait(epfd_, evs.data(), static_cast<int>(evs.size()), 200);
		for (int i = 0; i < n; ++i) {
			void *tag = evs[i].data.ptr;
			if (tag == &stopfd_)
				continue;
			if (tag == nullptr) {
				rdma_cm_event *ev = nullptr;
				while (rdma_get_cm_event(ech_, &ev) == 0) {
					rdma_cm_id *doomed = handle_cm(ev);
					rdma_ack_cm_event(ev);
					if (doomed)
						rdma_destroy_id(doomed);
				}
				continue;
			}
			auto *c = static_cast<Conn *>(tag);
			std::shared_ptr<Conn> sc;
			{
				std::lock_guard<std::mutex> g(mu_);
				for (auto &x : all_)
					if (x.get() == c)
						sc = x;
			}
			if (!sc)
				continue;
			ibv_cq *cq = nullptr;
			void *ctx = nullptr;
			if (ibv_get_cq_event(c->rch, &cq, &ctx) == 0) {
				ibv_ack_cq_events(cq, 1);
				ibv_req_notify_cq(cq, 0);
			}
			std::array<ibv_wc, 16> wc{};
			int k = 0;
			while ((k = ibv_poll_cq(c->rcq, static_cast<int>(wc.size()), wc.data())) > 0) {
				for (int j = 0; j < k; ++j) {
					if (wc[j].status != IBV_WC_SUCCESS) {
						{ // a failed send is the likelier cause: report that
							std::lock_guard<std::mutex> g(c->smu);
							c->poll_send_locked();
						}
						c->mark_dead(std::string("receive failed: ") +
						             ibv_wc_status_str(wc[j].status));
						continue;
					}
					Msg m = *c->rslot(wc[j].wr_id);
					try {
						if (!c->dead.load())
							c->post_recv(wc[j].wr_id);
						if (wc[j].byte_len != sizeof(Msg) || m.magic != proto::magic)
							throw Error(Errc::protocol,
							            c->desc + " sent a malformed message");
						dispatch(sc, m);
					} catch (const std::exception &e) {
						c->mark_dead(e.what());
					}
				}
			}
		}
	}
}

void Runtime::dispatch(const std::shared_ptr<Conn> &c, const Msg &m)
{
	auto t = static_cast<Type>(m.type);
	c->received++;
	debug("conn ", ptr(c.get()), " got type ", std::to_string(m.type), " req ", std::to_string(m.req_id),
	      " status ", std::to_string(m.status));
	switch (t) {
	case Type::created:
	case Type::joined:
	case Type::seg_ack:
	case Type::closed:
	case Type::lookup_reply:
	case Type::enrolled:
	case Type::region_info: {
		if (t == Type::joined && m.status == 0) {
			// room for this ring's credits (and a seg_ack and closed) before anyone
			// can send them
			c->reserve_recvs(m.nseg + 2);
			std::lock_guard<std::mutex> g(c->mu);
			c->sources[m.ring] = SourceShared{};
		}
		{
			std::lock_guard<std::mutex> g(c->mu);
			auto it = c->pending.find(m.req_id);
			if (it != c->pending.end()) {
				it->second.done = true;
				it->second.reply = m;
			}
		}
		c->cv.notify_all();
		return;
	}
	case Type::credit: {
		{
			std::lock_guard<std::mutex> g(c->mu);
			auto it = c->sources.find(m.ring);
			if (it == c->sources.end())
				throw Error(Errc::protocol, c->desc + " returned credit for unknown ring");
			it->second.returned += m.len;
		}
		c->cv.notify_all();
		return;
	}
	default: break;
	}
	Msg reply = proto::make(Type::closed, m.req_id);
	try {
		reply = serve(c, m);
	} catch (const Error &e) {
		reply.status = static_cast<int32_t>(e.code());
		reply.set_text(e.detail());
	}
	if (reply.type != 0 && m.req_id != 0)
		c->send_msg(reply);
}

// Owner/directory side of the protocol.  Returns the reply (type 0: none).
Msg Runtime::serve(const std::shared_ptr<Conn> &c, const Msg &m)
{
	auto t = static_cast<Type>(m.type);
	std::string name = m.get_text();
	switch (t) {
	case Type::create: {
		Msg r = proto::make(Type::created, m.req_id);
		if (name.empty() || name.size() > proto::name_max)
			throw Error(Errc::invalid_argument,
			            "buffer name must be 1.." + std::to_string(proto::name_max) + " bytes");
		BufferOptions o;
		o.kind = static_cast<BufferKind>(m.kind);
		o.segment_size = m.seg_size;
		o.segments = m.nseg;
		o.region_size = m.region_size;
		if (o.kind == BufferKind::append) {
			if (o.segment_size < 64 || o.segment_size > (1ULL << 30) || o.segment_size % 8)
				throw Error(Errc::invalid_argument, "segment size " + std::to_string(o.segment_size) +
				                                            " must be a multiple of 8 in 64..1 GiB");
			if (o.segments < 1 || o.segments > 512)
				throw Error(Errc::invalid_argument, "segments per source must be 1..512");
		} else if (o.kind == BufferKind::region) {
			if (o.region_size == 0 || o.region_size > (16ULL << 30))
				throw Error(Errc::invalid_argument, "region size must be 1 byte..16 GiB");
		} else {
			throw Error(Errc::invalid_argument, "unknown buffer kind " + std::to_string(m.kind));
		}
		std::lock_guard<std::mutex> g(bufmu);
		auto it = buffers.find(name);
		if (it != buffers.end()) {
			if (it->second->opts.kind != o.kind)
				throw Error(Errc::wrong_kind, "buffer '" + name + "' exists with another kind");
			r.flags = proto::flag_existed;
			r.handle = it->second->id;
			return r;
		}
		auto b = std::make_shared<Buffer>();
		b->name = name;
		b->id = next_id++;
		b->opts = o;
		if (o.kind == BufferKind::region) {
			b->region = alloc_touched(o.region_size);
			ibv_pd *pd = c ? c->pd : nullptr;
			if (!pd) {
				std::lock_guard<std::mutex> pg(mu_);
				pd = pds_.empty() ? nullptr : pds_.begin()->second;
			}
			if (pd) {
				b->region_mr.reset(ibv_reg_mr(pd, b->region.get(), o.region_size,
				                              IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				                                      IBV_ACCESS_REMOTE_READ));
				if (!b->region_mr)
					fail_sys("ibv_reg_mr (region '" + name + "')", errno);
			}
		}
		r.handle = b->id;
		buffers[name] = b;
		bufcv.notify_all();
		return r;
	}
	case Type::join: {
		std::shared_ptr<Buffer> b;
		{
			std::lock_guard<std::mutex> g(bufmu);
			auto it = buffers.find(name);
			if (it == buffers.end())
				throw Error(Errc::unknown_buffer,
				            "node " + std::to_string(opts_.node_id) + " has no buffer '" + name + "'");
			b = it->second;
		}
		if (b->opts.kind != BufferKind::append)
			throw Error(Errc::wrong_kind, "'" + name + "' is a region, not an append buffer");
		auto r = std::make_shared<Ring>(b->opts.segment_size, b->opts.segments);
		size_t bytes = b->opts.segment_size * b->opts.segments;
		r->mem = alloc_touched(bytes);
		r->mr.reset(ibv_reg_mr(c->pd, r->mem.get(), bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
		if (!r->mr)
			fail_sys("ibv_reg_mr (ring of '" + name + "')", errno);
		c->reserve_recvs(b->opts.segments + 2);
		r->node = c->peer;
		r->conn = c;
		{
			std::lock_guard<std::mutex> g(bufmu);
			r->id = next_id++;
			r->index = static_cast<uint32_t>(b->rings.size());
			b->rings.push_back(r);
		}
		{
			std::lock_guard<std::mutex> g(c->mu);
			c->server_rings[r->id] = r;
		}
		bufcv.notify_all();
		Msg rep = proto::make(Type::joined, m.req_id);
		rep.handle = b->id;
		rep.ring = r->id;
		rep.addr = reinterpret_cast<uint64_t>(r->mem.get());
		rep.rkey = r->mr->rkey;
		rep.seg_size = b->opts.segment_size;
		rep.nseg = b->opts.segments;
		return rep;
	}
	case Type::seg:
	case Type::close: {
		std::shared_ptr<Ring> r;
		{
			std::lock_guard<std::mutex> g(c->mu);
			auto it = c->server_rings.find(m.ring);
			if (it != c->server_rings.end())
				r = it->second;
		}
		if (!r)
			throw Error(Errc::protocol, c->desc + " used unknown ring " + std::to_string(m.ring));
		std::string err;
		{
			std::lock_guard<std::mutex> g(bufmu);
			if (t == Type::seg && m.seq == UINT64_MAX) {
				// a sync: everything before it on this connection was processed
			} else if (t == Type::seg) {
				err = r->rd.announce(m.seq, m.len);
				if (!err.empty() && r->state == SourceState::open) {
					r->state = SourceState::aborted;
					r->reason = "protocol error from " + c->desc + ": " + err;
				}
			} else if (r->state == SourceState::open) {
				r->state = SourceState::closed;
			}
		}
		bufcv.notify_all();
		if (!err.empty())
			throw Error(Errc::protocol, err);
		if (t == Type::close)
			return proto::make(Type::closed, m.req_id);
		if (m.flags & proto::flag_ack)
			return proto::make(Type::seg_ack, m.req_id);
		return Msg{};
	}
	case Type::lookup: {
		std::lock_guard<std::mutex> g(bufmu);
		auto it = directory.find(name);
		if (it == directory.end())
			throw Error(Errc::unknown_buffer, "no buffer '" + name + "' in the directory (node " +
			                                          std::to_string(opts_.node_id) + ")");
		Msg r = proto::make(Type::lookup_reply, m.req_id);
		r.node = it->second;
		return r;
	}
	case Type::enroll: {
		if (!opts_.spec.find(m.node))
			throw Error(Errc::invalid_argument, "enroll of unknown node " + std::to_string(m.node));
		std::lock_guard<std::mutex> g(bufmu);
		directory[name] = m.node;
		return proto::make(Type::enrolled, m.req_id);
	}
	case Type::open_region: {
		std::lock_guard<std::mutex> g(bufmu);
		auto it = buffers.find(name);
		if (it == buffers.end())
			throw Error(Errc::unknown_buffer,
			            "node " + std::to_string(opts_.node_id) + " has no buffer '" + name + "'");
		auto &b = *it->second;
		if (b.opts.kind != BufferKind::region)
			throw Error(Errc::wrong_kind, "'" + name + "' is an append buffer, not a region");
		if (!b.region_mr)
			b.region_mr.reset(
			        ibv_reg_mr(c->pd, b.region.get(), b.opts.region_size,
			                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
		if (!b.region_mr || b.region_mr->pd != c->pd)
			throw Error(Errc::system, "region '" + name + "' is not registered on this device");
		Msg r = proto::make(Type::region_info, m.req_id);
		r.addr = reinterpret_cast<uint64_t>(b.region.get());
		r.rkey = b.region_mr->rkey;
		r.region_size = b.opts.region_size;
		return r;
	}
	default: throw Error(Errc::protocol, c->desc + " sent unknown message type " + std::to_string(m.type));
	}
}

void Runtime::create_buffer(const std::string &name, int owner, const BufferOptions &o)
{
	if (name.empty() || name.size() > proto::name_max)
		throw Error(Errc::invalid_argument,
		            "buffer name must be 1.." + std::to_string(proto::name_max) + " bytes");
	if (!opts_.spec.find(owner))
		throw Error(Errc::invalid_argument,
		            "owner node " + std::to_string(owner) + " is not in the cluster spec");
	Msg m = proto::make(Type::create);
	m.set_text(name);
	m.kind = static_cast<uint32_t>(o.kind);
	m.seg_size = o.segment_size;
	m.nseg = o.segments;
	m.region_size = o.region_size;
	if (owner == opts_.node_id) {
		Msg r = serve(nullptr, m);
		(void)r;
	} else {
		call(owner, m);
	}
	Msg e = proto::make(Type::enroll);
	e.set_text(name);
	e.node = owner;
	int dir = opts_.spec.directory_node();
	if (dir == opts_.node_id)
		serve(nullptr, e);
	else
		call(dir, e);
	std::lock_guard<std::mutex> g(bufmu);
	known_owner[name] = owner;
}

int Runtime::lookup(const std::string &name)
{
	{
		std::lock_guard<std::mutex> g(bufmu);
		auto it = known_owner.find(name);
		if (it != known_owner.end())
			return it->second;
	}
	Msg m = proto::make(Type::lookup);
	m.set_text(name);
	int dir = opts_.spec.directory_node();
	Msg r = dir == opts_.node_id ? serve(nullptr, m) : call(dir, m);
	std::lock_guard<std::mutex> g(bufmu);
	known_owner[name] = r.node;
	return r.node;
}

void Runtime::shutdown()
{
	if (shut_)
		return;
	shut_ = true;
	stopping_ = true;
	if (stopfd_ >= 0) {
		uint64_t one = 1;
		(void)!::write(stopfd_, &one, sizeof one);
	}
	if (thread_.joinable())
		thread_.join();
	std::vector<std::shared_ptr<Conn>> conns;
	{
		std::lock_guard<std::mutex> g(mu_);
		conns = all_;
		all_.clear();
		out_.clear();
	}
	for (auto &c : conns)
		if (c->id && c->up.load() && !c->dead.load())
			rdma_disconnect(c->id);
	{
		std::lock_guard<std::mutex> g(bufmu);
		buffers.clear(); // rings/regions deregister here; conns still hold rings
	}
	for (auto &c : conns) {
		{
			std::lock_guard<std::mutex> g(c->mu);
			c->server_rings.clear();
			c->dead = true;
			if (c->why.empty())
				c->why = "DPI runtime shut down";
		}
		c->cv.notify_all();
		if (c->id) {
			if (c->id->qp)
				rdma_destroy_qp(c->id);
			c->id->context = nullptr;
		}
		c->rmr.reset();
		c->smr.reset();
		if (c->rcq)
			ibv_destroy_cq(c->rcq);
		if (c->scq)
			ibv_destroy_cq(c->scq);
		if (c->rch)
			ibv_destroy_comp_channel(c->rch);
		if (c->id)
			rdma_destroy_id(c->id);
		c->id = nullptr;
		c->rcq = c->scq = nullptr;
		c->rch = nullptr;
	}
	if (listen_id_)
		rdma_destroy_id(listen_id_);
	listen_id_ = nullptr;
	{
		std::lock_guard<std::mutex> g(mu_);
		for (auto &[ctx, pd] : pds_)
			ibv_dealloc_pd(pd);
		pds_.clear();
	}
	if (ech_)
		rdma_destroy_event_channel(ech_);
	ech_ = nullptr;
	if (epfd_ >= 0)
		close(epfd_);
	if (stopfd_ >= 0)
		close(stopfd_);
	epfd_ = stopfd_ = -1;
}

// ---------------------------------------------------------------- Appender

class AppenderImpl final : public Appender
{
public:
	AppenderImpl(std::shared_ptr<Runtime> rt, std::string name) : rt_(std::move(rt)), name_(std::move(name))
	{
		int owner = rt_->lookup(name_);
		if (owner == rt_->id())
			throw Error(Errc::invalid_argument, "'" + name_ + "' is owned by this node (" +
			                                            std::to_string(owner) +
			                                            "); append from another node");
		Msg m = proto::make(Type::join);
		m.set_text(name_);
		Msg r = rt_->call(owner, m, &c_);
		crit_ = rt_->critical_size();
		ring_ = r.ring;
		raddr_ = r.addr;
		rkey_ = r.rkey;
		ws_.emplace(r.seg_size, r.nseg);
		size_t bytes = r.seg_size * staging_blocks;
		stage_ = alloc_touched(bytes);
		stage_mr_.reset(ibv_reg_mr(c_->pd, stage_.get(), bytes, IBV_ACCESS_LOCAL_WRITE));
		if (!stage_mr_)
			fail_sys("ibv_reg_mr (staging pool)", errno);
	}
	~AppenderImpl() override
	{
		try {
			close();
		} catch (...) { // NOLINT(bugprone-empty-catch): destructor must not throw
		}
	}

	[[nodiscard]] size_t max_append() const noexcept override { return ring::max_record(ws_->segment_size()); }
	[[nodiscard]] const std::string &name() const noexcept override { return name_; }

	void append(std::span<const std::byte> data) override
	{
		if (closed_)
			throw Error(Errc::closed, "appender for '" + name_ + "' is closed");
		size_t len = data.size();
		if (len > max_append())
			throw Error(Errc::too_large, "append of " + std::to_string(len) + " bytes to '" + name_ +
			                                     "' exceeds its maximum of " +
			                                     std::to_string(max_append()) + " (segment size " +
			                                     std::to_string(ws_->segment_size()) +
			                                     " minus 8 bytes of framing)");
		if (!ws_->fits(len)) {
			if (ws_->segment_open())
				seal(false);
			acquire();
		}
		size_t off = ws_->place(len);
		std::byte *blk = block();
		ring::write_header(blk + off, len);
		bool zero = false;
		if (len >= crit_ && len > 0)
			zero = write_in_place(data, off);
		if (!zero) {
			std::memcpy(blk + off + ring::header_size, data.data(), len);
			rt_->st_copied++;
		} else {
			rt_->st_zero++;
		}
		rt_->st_appends++;
		rt_->st_bytes += len;
		if (ws_->full())
			seal(false);
	}

	void flush() override
	{
		if (closed_)
			return;
		if (ws_->segment_open()) {
			seal(true);
		} else if (unacked_) {
			Msg m = proto::make(Type::seg);
			m.ring = ring_;
			m.flags = proto::flag_ack;
			m.seq = UINT64_MAX; // a sync: no segment, just the ack
			c_->request(m, rt_->op_timeout());
		}
		unacked_ = false;
	}

	void close() override
	{
		if (closed_)
			return;
		if (ws_->segment_open())
			seal(false);
		Msg m = proto::make(Type::close);
		m.ring = ring_;
		closed_ = true;
		c_->request(m, rt_->op_timeout());
		// the staging blocks must not be freed under in-flight writes
		c_->wait_done(last_seq_, deadline_after(rt_->op_timeout()));
	}

private:
	std::byte *block() { return stage_.get() + (ws_->seq() % staging_blocks) * ws_->segment_size(); }
	[[nodiscard]] uint64_t remote(size_t off) const { return raddr_ + ws_->slot_offset(ws_->seq()) + off; }

	void acquire()
	{
		auto deadline = deadline_after(rt_->op_timeout());
		bool stalled = false;
		while (!ws_->has_credit()) {
			std::unique_lock<std::mutex> g(c_->mu);
			auto &sh = c_->sources[ring_];
			if (sh.returned) {
				ws_->add_credits(sh.returned);
				sh.returned = 0;
				continue;
			}
			if (c_->dead.load())
				throw Error(Errc::connection_lost, c_->desc + ": " + c_->why);
			if (!stalled) {
				stalled = true;
				rt_->st_stalls++;
			}
			if (deadline == std::chrono::time_point<Clock>::max())
				c_->cv.wait(g);
			else if (c_->cv.wait_until(g, deadline) == std::cv_status::timeout)
				throw Error(Errc::timeout, "no free segment in '" + name_ + "' within " +
				                                   std::to_string(rt_->op_timeout().count()) +
				                                   " ms (consumer too slow or gone)");
		}
		// the staging block of this segment number was last used
		// staging_blocks segments ago; its seg Send was signaled
		uint64_t blk = ws_->seq() % staging_blocks;
		c_->wait_done(blk_seq_[blk], deadline);
		ws_->open_segment();
		pending_ = 0;
	}

	void post_staged(size_t end)
	{
		if (end > pending_) {
			last_seq_ = c_->write(block() + pending_, stage_mr_->lkey, end - pending_, remote(pending_),
			                      rkey_, false);
			pending_ = end;
		}
	}

	bool write_in_place(std::span<const std::byte> data, size_t off)
	{
		// Register the user's bytes piece by piece; each piece's RDMA Write is
		// in flight while the next piece is being registered.
		std::vector<MrPtr> mrs;
		size_t done = 0;
		uint64_t seq = 0;
		while (done < data.size()) {
			size_t n = std::min(zero_copy_piece, data.size() - done);
			ibv_mr *mr = ibv_reg_mr(c_->pd, const_cast<std::byte *>(data.data() + done), n, 0);
			if (!mr) {
				if (done == 0)
					return false; // e.g. memory the device cannot pin: copy instead
				fail_sys("ibv_reg_mr (in-place append)", errno);
			}
			mrs.emplace_back(mr);
			if (done == 0)
				post_staged(off + ring::header_size); // header and anything before it
			bool last = done + n == data.size();
			seq = c_->write(data.data() + done, mr->lkey, n, remote(off + ring::header_size + done), rkey_,
			                last);
			done += n;
		}
		c_->wait_done(seq, deadline_after(rt_->op_timeout()));
		last_seq_ = std::max(last_seq_, seq);
		pending_ = ws_->offset();
		return true;
	}

	void seal(bool ack)
	{
		post_staged(ws_->offset());
		uint64_t seq = ws_->seq();
		uint64_t blk = seq % staging_blocks;
		size_t used = ws_->seal();
		Msg m = proto::make(Type::seg);
		m.ring = ring_;
		m.seq = seq;
		m.len = used;
		rt_->st_sealed++;
		uint64_t s = 0;
		if (ack) {
			m.flags = proto::flag_ack;
			c_->request(m, rt_->op_timeout(), &s, true);
			unacked_ = false;
		} else {
			s = c_->send_msg(m, true);
			unacked_ = true;
		}
		blk_seq_[blk] = s;
		last_seq_ = std::max(last_seq_, s);
	}

	std::shared_ptr<Runtime> rt_;
	std::string name_;
	std::shared_ptr<Conn> c_;
	size_t crit_ = 0;
	uint64_t ring_ = 0;
	uint64_t raddr_ = 0;
	uint32_t rkey_ = 0;
	std::optional<ring::WriterState> ws_;
	MemPtr stage_;
	MrPtr stage_mr_;
	std::array<uint64_t, staging_blocks> blk_seq_{};
	size_t pending_ = 0;
	uint64_t last_seq_ = 0;
	bool unacked_ = false;
	bool closed_ = false;
};

std::unique_ptr<Appender> Runtime::appender(const std::string &name)
{
	return std::make_unique<AppenderImpl>(std::static_pointer_cast<Runtime>(shared_from_this()), name);
}

// ---------------------------------------------------------------- Consumer

class ConsumerImpl final : public Consumer
{
public:
	ConsumerImpl(std::shared_ptr<Runtime> rt, std::shared_ptr<Buffer> b) : rt_(std::move(rt)), b_(std::move(b)) {}
	~ConsumerImpl() override
	{
		std::lock_guard<std::mutex> g(rt_->bufmu);
		b_->has_consumer = false;
	}

	std::optional<Record> next(std::chrono::milliseconds wait) override
	{
		auto deadline = Clock::now() + wait;
		std::vector<std::pair<std::weak_ptr<Conn>, uint64_t>> credits;
		std::optional<Record> rec;
		{
			std::unique_lock<std::mutex> g(rt_->bufmu);
			for (;;) {
				rec = scan(credits);
				if (rec || wait.count() <= 0)
					break;
				if (!credits.empty())
					break; // hand the credits out before sleeping
				if (rt_->bufcv.wait_until(g, deadline) == std::cv_status::timeout) {
					rec = scan(credits);
					break;
				}
			}
		}
		for (auto &[wc, ring] : credits) {
			auto c = wc.lock();
			if (!c || c->dead.load())
				continue;
			Msg m = proto::make(Type::credit);
			m.ring = ring;
			m.len = 1;
			try {
				c->send_msg(m);
			} catch (const Error &) { // NOLINT(bugprone-empty-catch): source is gone; its ring is aborted
			}
		}
		if (!rec && !credits.empty() && wait.count() > 0 && Clock::now() < deadline)
			return next(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
		return rec;
	}

	[[nodiscard]] std::vector<SourceInfo> sources() const override
	{
		std::lock_guard<std::mutex> g(rt_->bufmu);
		std::vector<SourceInfo> v;
		for (auto &r : b_->rings)
			v.push_back({r->index, r->node, r->state, r->records, r->reason});
		return v;
	}

	[[nodiscard]] bool finished(size_t expected) const override
	{
		std::lock_guard<std::mutex> g(rt_->bufmu);
		if (b_->rings.size() < expected)
			return false;
		return std::ranges::all_of(b_->rings, [](const auto &r) {
			if (r->state == SourceState::open)
				return false;
			// drained: nothing announced beyond a fully read front segment
			return r->rd.empty() || (r->rd.pending() == 1 && r->rd.cursor >= r->rd.front().used);
		});
	}

private:
	// Called with bufmu held.
	std::optional<Record> scan(std::vector<std::pair<std::weak_ptr<Conn>, uint64_t>> &credits)
	{
		size_t n = b_->rings.size();
		for (size_t k = 0; k < n; ++k) {
			size_t i = (rr_ + k) % n;
			auto &r = *b_->rings[i];
			while (!r.rd.empty()) {
				const auto &f = r.rd.front();
				if (r.rd.cursor >= f.used) {
					r.rd.release();
					credits.emplace_back(r.conn, r.id);
					continue;
				}
				std::string err;
				const std::byte *seg = r.mem.get() + r.rd.front_slot_offset();
				auto data = ring::next_record(seg, f.used, r.rd.cursor, err);
				if (!data) {
					if (r.state == SourceState::open) {
						r.state = SourceState::aborted;
						r.reason = "corrupt segment " + std::to_string(f.seq) + ": " + err;
					}
					r.rd.cursor = f.used;
					continue;
				}
				rr_ = (i + 1) % n;
				return Record{r.index, r.node, r.records++, *data};
			}
		}
		return std::nullopt;
	}

	std::shared_ptr<Runtime> rt_;
	std::shared_ptr<Buffer> b_;
	size_t rr_ = 0;
};

std::unique_ptr<Consumer> Runtime::consumer(const std::string &name, std::chrono::milliseconds wait)
{
	auto deadline = Clock::now() + wait;
	std::unique_lock<std::mutex> g(bufmu);
	if (opts_.node_id < 0)
		throw Error(Errc::not_local,
		            "an anonymous client hosts no buffers; consume '" + name + "' on its owner");
	for (;;) {
		auto it = buffers.find(name);
		if (it != buffers.end()) {
			auto b = it->second;
			if (b->opts.kind != BufferKind::append)
				throw Error(Errc::wrong_kind, "'" + name + "' is a region, not an append buffer");
			if (b->has_consumer)
				throw Error(Errc::invalid_argument, "'" + name + "' already has a consumer");
			b->has_consumer = true;
			return std::make_unique<ConsumerImpl>(std::static_pointer_cast<Runtime>(shared_from_this()), b);
		}
		if (bufcv.wait_until(g, deadline) == std::cv_status::timeout && !buffers.contains(name)) {
			auto d = directory.find(name);
			if (d != directory.end() && d->second != opts_.node_id)
				throw Error(Errc::not_local, "'" + name + "' is owned by node " +
				                                     std::to_string(d->second) + "; consume it there");
			throw Error(Errc::unknown_buffer, "node " + std::to_string(opts_.node_id) + " has no buffer '" +
			                                          name + "' (waited " + std::to_string(wait.count()) +
			                                          " ms)");
		}
	}
}

// ---------------------------------------------------------------- Region

class RegionImpl final : public Region
{
public:
	RegionImpl(std::shared_ptr<Runtime> rt, const std::string &name) : rt_(std::move(rt)), name_(name)
	{
		int owner = rt_->lookup(name);
		if (owner == rt_->id()) {
			std::lock_guard<std::mutex> g(rt_->bufmu);
			auto it = rt_->buffers.find(name);
			if (it == rt_->buffers.end())
				throw Error(Errc::unknown_buffer, "no buffer '" + name + "' on this node");
			if (it->second->opts.kind != BufferKind::region)
				throw Error(Errc::wrong_kind, "'" + name + "' is an append buffer, not a region");
			local_ = it->second;
			size_ = local_->opts.region_size;
			return;
		}
		Msg m = proto::make(Type::open_region);
		m.set_text(name);
		Msg r = rt_->call(owner, m, &c_);
		raddr_ = r.addr;
		rkey_ = r.rkey;
		size_ = r.region_size;
		crit_ = rt_->critical_size();
		bounce_ = alloc_touched(bounce_size);
		// iWARP: an RDMA Read's sink must be remotely writable
		bmr_.reset(ibv_reg_mr(c_->pd, bounce_.get(), bounce_size,
		                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
		if (!bmr_)
			fail_sys("ibv_reg_mr (bounce buffer)", errno);
	}

	[[nodiscard]] size_t size() const noexcept override { return size_; }

	void write(size_t offset, std::span<const std::byte> data) override
	{
		check(offset, data.size());
		if (local_) {
			std::memcpy(local_->region.get() + offset, data.data(), data.size());
			return;
		}
		transfer(offset, const_cast<std::byte *>(data.data()), data.size(), true);
	}

	void read(size_t offset, std::span<std::byte> out) override
	{
		check(offset, out.size());
		if (local_) {
			std::memcpy(out.data(), local_->region.get() + offset, out.size());
			return;
		}
		transfer(offset, out.data(), out.size(), false);
	}

private:
	void check(size_t offset, size_t len) const
	{
		if (offset > size_ || len > size_ - offset)
			throw Error(Errc::out_of_bounds, std::to_string(len) + " bytes at offset " +
			                                         std::to_string(offset) + " of region '" + name_ +
			                                         "' (" + std::to_string(size_) + " bytes)");
	}

	void transfer(size_t offset, std::byte *p, size_t len, bool is_write)
	{
		auto deadline = deadline_after(rt_->op_timeout());
		if (len >= crit_) {
			int access = is_write ? 0 : IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
			MrPtr mr(ibv_reg_mr(c_->pd, p, len, access));
			if (mr) {
				uint64_t s = is_write ? c_->write(p, mr->lkey, len, raddr_ + offset, rkey_, true)
				                      : c_->read(p, mr->lkey, len, raddr_ + offset, rkey_);
				c_->wait_done(s, deadline);
				return;
			}
		}
		for (size_t done = 0; done < len;) {
			size_t n = std::min(bounce_size, len - done);
			uint64_t s = 0;
			if (is_write) {
				std::memcpy(bounce_.get(), p + done, n);
				s = c_->write(bounce_.get(), bmr_->lkey, n, raddr_ + offset + done, rkey_, true);
				c_->wait_done(s, deadline);
			} else {
				s = c_->read(bounce_.get(), bmr_->lkey, n, raddr_ + offset + done, rkey_);
				c_->wait_done(s, deadline);
				std::memcpy(p + done, bounce_.get(), n);
			}
			done += n;
		}
	}

	std::shared_ptr<Runtime> rt_;
	std::string name_;
	std::shared_ptr<Buffer> local_;
	std::shared_ptr<Conn> c_;
	uint64_t raddr_ = 0;
	uint32_t rkey_ = 0;
	size_t size_ = 0;
	size_t crit_ = 0;
	MemPtr bounce_;
	MrPtr bmr_;
};

std::unique_ptr<Region> Runtime::region(const std::string &name)
{
	return std::make_unique<RegionImpl>(std::static_pointer_cast<Runtime>(shared_from_this()), name);
}

} // namespace dpi::detail

namespace dpi
{

std::shared_ptr<Node> Node::start(Options opts)
{
	auto rt = std::make_shared<detail::Runtime>(std::move(opts));
	rt->init();
	return rt;
}

} // namespace dpi
