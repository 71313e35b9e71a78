// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "consumer.hpp"

#include "buffers.hpp"
#include "conn.hpp"
#include "runtime.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace dpi::detail
{

using proto::Msg;
using proto::Type;

namespace
{

class ConsumerImpl final : public Consumer
{
public:
	ConsumerImpl(std::shared_ptr<Runtime> rt, std::shared_ptr<Buffer> b) : rt_(std::move(rt)), b_(std::move(b)) {}
	~ConsumerImpl() override { rt_->table().release_consumer(*b_); }

	std::optional<Record> next(std::chrono::milliseconds wait) override
	{
		auto deadline = Clock::now() + wait;
		std::vector<std::pair<std::weak_ptr<Conn>, uint64_t>> credits;
		std::optional<Record> rec;
		{
			auto g = rt_->table().lock();
			for (;;) {
				rec = scan(credits);
				if (rec || wait.count() <= 0)
					break;
				if (!credits.empty() || !wake_.empty())
					break; // hand the credits and room out before sleeping
				// wake early when a gap in the shared log may become a hole
				auto until = std::min(deadline, recheck_);
				if (rt_->table().wait_until(g, until) == std::cv_status::timeout &&
				    Clock::now() >= deadline) {
					rec = scan(credits);
					break;
				}
			}
		}
		bool woke = !wake_.empty();
		for (auto &w : wake_) { // sources waiting for room in the shared log
			auto c = w.conn.lock();
			if (!c || c->dead())
				continue;
			Msg m = proto::make(Type::room_ok, w.req_id);
			m.seq = w.needed; // the consumer is at least there
			try {
				c->send_msg(m);
			} catch (const Error &) { // NOLINT(bugprone-empty-catch): source is gone; its ring is aborted
			}
		}
		wake_.clear();
		for (auto &[wc, ring] : credits) {
			auto c = wc.lock();
			if (!c || c->dead())
				continue;
			Msg m = proto::make(Type::credit);
			m.ring = ring;
			m.len = 1;
			try {
				c->send_msg(m);
			} catch (const Error &) { // NOLINT(bugprone-empty-catch): source is gone; its ring is aborted
			}
		}
		if (!rec && (!credits.empty() || woke) && wait.count() > 0 && Clock::now() < deadline)
			return next(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
		return rec;
	}

	[[nodiscard]] std::vector<SourceInfo> sources() const override
	{
		auto g = rt_->table().lock();
		std::vector<SourceInfo> v;
		for (auto &r : b_->rings)
			v.push_back({r->index, r->node, r->state, r->records, r->reason});
		return v;
	}

	[[nodiscard]] bool finished(size_t expected) const override
	{
		auto g = rt_->table().lock();
		if (b_->rings.size() < expected)
			return false;
		if (const auto *l = b_->log.get()) {
			uint64_t h = l->rd.head();
			size_t left = l->rd.pending();
			if (l->pop_pending) {
				h += l->rd.front()->footprint();
				--left;
			}
			if (left != 0 || h != l->tail())
				return false;
		}
		return std::ranges::all_of(b_->rings, [](const auto &r) {
			if (r->state == SourceState::open)
				return false;
			if (r->shared)
				return true; // the log was checked above
			// drained: nothing announced beyond a fully read front segment
			return r->rd.empty() || (r->rd.pending() == 1 && r->rd.cursor >= r->rd.front().used);
		});
	}

	[[nodiscard]] uint64_t hole_bytes() const override
	{
		auto g = rt_->table().lock();
		return b_->log ? b_->log->hole_bytes : 0;
	}

private:
	// Called with the table locked: the shared log first or the rings first,
	// alternately, so neither starves the other.
	std::optional<Record> scan(std::vector<std::pair<std::weak_ptr<Conn>, uint64_t>> &credits)
	{
		recheck_ = Deadline::max();
		log_first_ = !log_first_;
		if (log_first_) {
			if (auto r = scan_log())
				return r;
			return scan_rings(credits);
		}
		if (auto r = scan_rings(credits))
			return r;
		return scan_log();
	}

	// The shared log's next record in position order, once committed.
	std::optional<Record> scan_log()
	{
		SharedLog *l = b_->log.get();
		if (!l)
			return std::nullopt;
		if (l->pop_pending) {
			l->rd.pop();
			l->pop_pending = false;
			l->take_satisfied(wake_);
		}
		for (;;) {
			if (auto e = l->rd.front()) {
				uint64_t pos = l->rd.head();
				if (e->pad || e->source >= b_->rings.size()) {
					l->rd.pop();
					l->take_satisfied(wake_);
					continue;
				}
				auto &r = *b_->rings[e->source];
				std::string err;
				size_t cursor = 0;
				const std::byte *at = l->mem.get() + l->rd.front_offset();
				auto data = ring::next_record(at, e->footprint(), cursor, err);
				if (data && data->size() != e->length)
					err = "header says " + std::to_string(data->size()) + " bytes, commit said " +
					      std::to_string(e->length);
				if (!data || !err.empty()) {
					if (r.state == SourceState::open) {
						r.state = SourceState::aborted;
						r.reason = "corrupt record at log position " + std::to_string(pos) +
						           ": " + err;
						++b_->aborted_sources;
					}
					l->rd.pop();
					l->take_satisfied(wake_);
					continue;
				}
				l->pop_pending = true;
				l->gap_head = UINT64_MAX;
				return Record{r.index, r.node, r.records++, *data};
			}
			uint64_t tail = l->tail();
			if (!l->rd.gap(tail)) {
				l->gap_head = UINT64_MAX;
				return std::nullopt;
			}
			std::string why = hole_due(*l);
			if (why.empty())
				return std::nullopt;
			uint64_t at = l->rd.head();
			uint64_t n = l->rd.skip_hole(tail);
			l->hole_bytes += n;
			++l->holes;
			l->gap_head = UINT64_MAX;
			l->take_satisfied(wake_);
			warn("shared log of '", b_->name, "': skipped a hole of ", std::to_string(n),
			     " bytes at position ", std::to_string(at), " (", why, ")");
		}
	}

	// Whether the reservation nobody committed at the log's head is a hole
	// (Documentation/dpi.md "Holes"); "" while it may still be committed.
	std::string hole_due(SharedLog &l)
	{
		auto now = Clock::now();
		if (l.gap_head != l.rd.head()) {
			l.gap_head = l.rd.head();
			l.gap_since = now;
		}
		bool open = std::ranges::any_of(
		        b_->rings, [](const auto &r) { return r->shared && r->state == SourceState::open; });
		if (!open)
			return "no source of the log is open";
		auto opt = rt_->op_timeout();
		std::optional<std::chrono::milliseconds> grace;
		if (b_->aborted_sources > 0)
			grace = opt.count() > 0 ? opt : hole_grace;
		else if (opt.count() > 0)
			grace = opt;
		if (!grace)
			return {};
		if (now - l.gap_since >= *grace)
			return "uncommitted for " + std::to_string(grace->count()) + " ms" +
			       (b_->aborted_sources > 0 ? " after a source aborted" : " (op_timeout)");
		recheck_ = std::min(recheck_, l.gap_since + *grace);
		return {};
	}

	std::optional<Record> scan_rings(std::vector<std::pair<std::weak_ptr<Conn>, uint64_t>> &credits)
	{
		size_t n = b_->rings.size();
		for (size_t k = 0; k < n; ++k) {
			size_t i = (rr_ + k) % n;
			auto &r = *b_->rings[i];
			while (!r.shared && !r.rd.empty()) {
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

	// With op_timeout 0 (wait forever), how long a gap at the log's head may
	// last after a source aborted before it is declared that source's hole.
	static constexpr std::chrono::milliseconds hole_grace{5000};

	std::shared_ptr<Runtime> rt_;
	std::shared_ptr<Buffer> b_;
	size_t rr_ = 0;
	bool log_first_ = false;
	std::vector<SharedLog::Waiter> wake_; // room requests to answer after unlocking
	Deadline recheck_ = Deadline::max();
};

} // namespace

std::unique_ptr<Consumer> make_consumer(std::shared_ptr<Runtime> rt, std::shared_ptr<Buffer> b)
{
	return std::make_unique<ConsumerImpl>(std::move(rt), std::move(b));
}

} // namespace dpi::detail
