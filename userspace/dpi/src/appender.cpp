// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "appender.hpp"

#include "conn.hpp"
#include "ring.hpp"
#include "runtime.hpp"

#include "shared.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

namespace dpi::detail
{

using proto::Msg;
using proto::Type;

namespace
{

constexpr uint32_t staging_blocks = 4;
constexpr size_t zero_copy_piece = size_t{256} * 1024;

class AppenderImpl final : public Appender
{
public:
	// `r` is the owner's `joined` reply on connection `c`.
	AppenderImpl(std::shared_ptr<Runtime> rt, std::string name, std::shared_ptr<Conn> c, const Msg &r)
	    : rt_(std::move(rt)), name_(std::move(name)), c_(std::move(c))
	{
		crit_ = rt_->critical_size();
		ring_ = r.ring;
		raddr_ = r.addr;
		rkey_ = r.rkey;
		ws_.emplace(r.seg_size, r.nseg);
		size_t bytes = r.seg_size * staging_blocks;
		stage_ = alloc_touched(bytes);
		stage_mr_.reset(ibv_reg_mr(c_->pd(), stage_.get(), bytes, IBV_ACCESS_LOCAL_WRITE));
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
		if (!zero)
			std::memcpy(blk + off + ring::header_size, data.data(), len);
		rt_->counters().append(len, zero);
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
		while (!ws_->has_credit()) {
			uint64_t n = c_->take_credits(ring_, deadline, [this] { rt_->counters().stalled(); });
			if (n == 0)
				throw Error(Errc::timeout, "no free segment in '" + name_ + "' within " +
				                                   std::to_string(rt_->op_timeout().count()) +
				                                   " ms (consumer too slow or gone)");
			ws_->add_credits(n);
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
			ibv_mr *mr = ibv_reg_mr(c_->pd(), const_cast<std::byte *>(data.data() + done), n, 0);
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
		rt_->counters().sealed();
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

// A source of a shared-log buffer (shared.hpp, Documentation/dpi.md
// "Append: shared log"): reserve with a remote fetch-and-add on the tail,
// RDMA-write the record there, commit the ranges in batches with a Send
// after the Writes.  Falls back to a ring where atomics do not work.
class LogAppender final : public Appender
{
public:
	LogAppender(std::shared_ptr<Runtime> rt, std::string name, std::shared_ptr<Conn> c, const Msg &r)
	    : rt_(std::move(rt)), name_(std::move(name)), c_(std::move(c))
	{
		crit_ = rt_->critical_size();
		src_ = r.ring;
		laddr_ = r.addr;
		lrkey_ = r.rkey;
		cap_ = r.seg_size;
		max_ = r.len;
		ctl_addr_ = r.seq;
		ctl_rkey_ = static_cast<uint32_t>(r.region_size);
		if (cap_ < 128 || cap_ % 8 || max_ == 0 || ring::record_footprint(max_) > cap_ / 2)
			throw Error(Errc::protocol, c_->desc() + " granted a shared log of " + std::to_string(cap_) +
			                                    " bytes for records of " + std::to_string(max_));
		words_ = alloc_touched(8);
		// iWARP: an RDMA Read's sink must be remotely writable
		words_mr_.reset(
		        ibv_reg_mr(c_->pd(), words_.get(), 16, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
		stage_ = alloc_touched(ring::record_footprint(max_));
		stage_mr_.reset(
		        ibv_reg_mr(c_->pd(), stage_.get(), ring::record_footprint(max_), IBV_ACCESS_LOCAL_WRITE));
		if (!words_mr_ || !stage_mr_)
			fail_sys("ibv_reg_mr (shared-log appender)", errno);
	}
	~LogAppender() override
	{
		try {
			close();
		} catch (...) { // NOLINT(bugprone-empty-catch): destructor must not throw
		}
	}

	[[nodiscard]] size_t max_append() const noexcept override { return rings_ ? rings_->max_append() : max_; }
	[[nodiscard]] const std::string &name() const noexcept override { return name_; }
	[[nodiscard]] bool shared() const noexcept override { return !rings_; }

	// Trades the log for a ring of the same buffer on the same connection,
	// then retires the log source (it never committed anything).
	void fall_back(const std::string &why)
	{
		warn("append to '", name_, "' uses a ring, not the shared log: ", why);
		rt_->counters().shared_fallback();
		Msg m = proto::make(Type::join);
		m.flags = proto::flag_rings;
		m.set_text(name_);
		Msg r = c_->request(m, rt_->op_timeout());
		rings_ = std::make_unique<AppenderImpl>(rt_, name_, c_, r);
		Msg cl = proto::make(Type::close);
		cl.ring = src_;
		c_->request(cl, rt_->op_timeout());
	}

	void append(std::span<const std::byte> data) override
	{
		if (rings_) {
			rings_->append(data);
			return;
		}
		if (closed_)
			throw Error(Errc::closed, "appender for '" + name_ + "' is closed");
		size_t len = data.size();
		if (len > max_)
			throw Error(Errc::too_large, "append of " + std::to_string(len) + " bytes to '" + name_ +
			                                     "' exceeds its maximum of " + std::to_string(max_) +
			                                     " (shared log of " + std::to_string(cap_) + " bytes)");
		size_t fp = ring::record_footprint(len);
		for (;;) {
			auto pos = reserve(fp);
			if (!pos) { // the connection refused atomics: now on a ring
				rings_->append(data);
				return;
			}
			auto p = shared::place(*pos, fp, cap_);
			if (p.pad) {
				add(*pos, fp | shared::pad_bit);
				rt_->counters().shared_pad();
				continue;
			}
			wait_room(*pos, fp);
			bool zero = write_record(data, p.offset);
			add(*pos, len);
			rt_->counters().append(len, zero);
			rt_->counters().shared_append();
			return;
		}
	}

	void flush() override
	{
		if (rings_) {
			rings_->flush();
			return;
		}
		if (closed_)
			return;
		if (n_ > 0) {
			send_commits(true);
		} else if (unacked_) {
			Msg m = proto::make(Type::seg);
			m.ring = src_;
			m.flags = proto::flag_ack;
			m.seq = UINT64_MAX; // a sync: everything committed before it was processed
			c_->request(m, rt_->op_timeout());
			unacked_ = false;
		}
	}

	void close() override
	{
		if (rings_) {
			rings_->close();
			return;
		}
		if (closed_)
			return;
		if (n_ > 0)
			send_commits(false);
		Msg m = proto::make(Type::close);
		m.ring = src_;
		closed_ = true;
		// signaled, so that its completion retires the unsignaled Writes
		// before it: the staging block must outlive them
		uint64_t s = 0;
		c_->request(m, rt_->op_timeout(), &s, true);
		c_->wait_done(std::max(last_seq_, s), deadline_after(rt_->op_timeout()));
	}

private:
	[[nodiscard]] uint64_t fetched() const
	{
		return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(words_.get()))
		        .load(std::memory_order_acquire);
	}

	// Reserves `fp` bytes: the stream position, or nullopt after falling
	// back to a ring because the provider refused the first atomic.
	std::optional<uint64_t> reserve(size_t fp)
	{
		int err = 0;
		uint64_t s = c_->fetch_add(words_.get(), words_mr_->lkey, ctl_addr_, ctl_rkey_, fp, err);
		if (s == 0) {
			if ((err == EOPNOTSUPP || err == ENOTSUP) && !reserved_) {
				fall_back("the connection " + c_->desc() +
				          " does not carry atomics (fetch-and-add: " + std::strerror(err) + ")");
				return std::nullopt;
			}
			fail_sys(c_->desc() + ": ibv_post_send (fetch-and-add)", err);
		}
		c_->wait_result(s, deadline_after(rt_->op_timeout()));
		last_seq_ = std::max(last_seq_, s);
		reserved_ = true;
		return fetched();
	}

	// Backpressure: waits until the consumer released the bytes this
	// reservation overlaps from the previous lap.  The owner answers a `room`
	// request once its consumer got that far.  What is batched is committed
	// first: the consumer could be waiting for exactly that.
	void wait_room(uint64_t pos, size_t fp)
	{
		if (shared::may_write(pos, fp, consumed_, cap_))
			return;
		if (n_ > 0)
			send_commits(false);
		rt_->counters().stalled();
		Msg m = proto::make(Type::room);
		m.ring = src_;
		m.len = pos + fp - cap_;
		Msg r;
		try {
			uint64_t s = 0;
			r = c_->request(m, rt_->op_timeout(), &s);
			last_seq_ = std::max(last_seq_, s);
		} catch (const Error &e) {
			if (e.code() != Errc::timeout)
				throw;
			throw Error(Errc::timeout, "no room in the shared log of '" + name_ + "' within " +
			                                   std::to_string(rt_->op_timeout().count()) +
			                                   " ms (consumer too slow or gone)");
		}
		consumed_ = std::max(consumed_, r.seq);
		if (!shared::may_write(pos, fp, consumed_, cap_))
			throw Error(Errc::protocol, c_->desc() + " granted room up to " + std::to_string(r.seq) +
			                                    ", not the " + std::to_string(m.len) + " asked for");
	}

	// Writes header and data at log offset `off`; true when the data went
	// from the caller's memory (registered in place).
	bool write_record(std::span<const std::byte> data, size_t off)
	{
		size_t len = data.size();
		ring::write_header(stage_.get(), len);
		uint64_t raddr = laddr_ + off;
		if (len >= crit_ && len > 0) {
			MrPtr mr(ibv_reg_mr(c_->pd(), const_cast<std::byte *>(data.data()), len, 0));
			if (mr) {
				c_->write(stage_.get(), stage_mr_->lkey, ring::header_size, raddr, lrkey_, false);
				uint64_t s =
				        c_->write(data.data(), mr->lkey, len, raddr + ring::header_size, lrkey_, true);
				c_->wait_done(s, deadline_after(rt_->op_timeout()));
				last_seq_ = std::max(last_seq_, s);
				return true;
			}
		}
		// The staging block is free again: this append's fetch-and-add
		// completed after the previous record's Write (RC completes in order).
		std::memcpy(stage_.get() + ring::header_size, data.data(), len);
		last_seq_ = c_->write(stage_.get(), stage_mr_->lkey, ring::header_size + len, raddr, lrkey_, false);
		return false;
	}

	void add(uint64_t pos, uint64_t length_flags)
	{
		batch_[n_++] = {pos, length_flags};
		if (n_ == batch_.size())
			send_commits(false);
	}

	// One commit Send after the Writes it covers; every commit_window-th
	// waits for the owner's ack (its receives are reserved per source).
	void send_commits(bool ack)
	{
		Msg m = proto::make(Type::commit);
		m.ring = src_;
		m.len = n_;
		std::memcpy(m.text, batch_.data(), sizeof(batch_));
		n_ = 0;
		++commits_;
		if (ack || commits_ % shared::commit_window == 0) {
			m.flags = proto::flag_ack;
			uint64_t s = 0;
			c_->request(m, rt_->op_timeout(), &s);
			last_seq_ = std::max(last_seq_, s);
			unacked_ = false;
		} else {
			last_seq_ = std::max(last_seq_, c_->send_msg(m));
			unacked_ = true;
		}
	}

	std::shared_ptr<Runtime> rt_;
	std::string name_;
	std::shared_ptr<Conn> c_;
	size_t crit_ = 0;
	uint64_t src_ = 0;
	uint64_t laddr_ = 0;
	uint32_t lrkey_ = 0;
	size_t cap_ = 0;
	size_t max_ = 0;
	uint64_t ctl_addr_ = 0;
	uint32_t ctl_rkey_ = 0;
	MemPtr words_; // the fetch-and-add result
	MemPtr stage_;
	MrPtr words_mr_;
	MrPtr stage_mr_;
	uint64_t consumed_ = 0; // the owner's consumer is at least here
	std::array<shared::Packed, shared::commit_batch> batch_{};
	size_t n_ = 0;
	uint64_t commits_ = 0;
	uint64_t last_seq_ = 0;
	bool reserved_ = false;
	bool unacked_ = false;
	bool closed_ = false;
	std::unique_ptr<AppenderImpl> rings_; // after a fallback
};

} // namespace

std::unique_ptr<Appender> make_appender(std::shared_ptr<Runtime> rt, std::string name)
{
	int owner = rt->lookup(name);
	if (owner == rt->id())
		throw Error(Errc::invalid_argument, "'" + name + "' is owned by this node (" + std::to_string(owner) +
		                                            "); append from another node");
	Msg m = proto::make(Type::join);
	m.set_text(name);
	std::shared_ptr<Conn> c;
	Msg r = rt->call(owner, m, &c);
	if (!(r.flags & proto::flag_shared)) {
		if (r.text[0] != '\0') { // a shared-log buffer, but not for us
			warn("append to '", name, "' uses a ring, not the shared log: ", r.get_text());
			rt->counters().shared_fallback();
		}
		return std::make_unique<AppenderImpl>(std::move(rt), std::move(name), std::move(c), r);
	}
	std::string dev = c->device();
	bool atomics = c->atomics();
	auto a = std::make_unique<LogAppender>(std::move(rt), std::move(name), std::move(c), r);
	if (!atomics)
		a->fall_back("this node's device " + dev + " has no remote atomics");
	return a;
}

} // namespace dpi::detail
