// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "appender.hpp"

#include "conn.hpp"
#include "ring.hpp"
#include "runtime.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
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

} // namespace

std::unique_ptr<Appender> make_appender(std::shared_ptr<Runtime> rt, std::string name)
{
	return std::make_unique<AppenderImpl>(std::move(rt), std::move(name));
}

} // namespace dpi::detail
