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
				if (!credits.empty())
					break; // hand the credits out before sleeping
				if (rt_->table().wait_until(g, deadline) == std::cv_status::timeout) {
					rec = scan(credits);
					break;
				}
			}
		}
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
		if (!rec && !credits.empty() && wait.count() > 0 && Clock::now() < deadline)
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
		return std::ranges::all_of(b_->rings, [](const auto &r) {
			if (r->state == SourceState::open)
				return false;
			// drained: nothing announced beyond a fully read front segment
			return r->rd.empty() || (r->rd.pending() == 1 && r->rd.cursor >= r->rd.front().used);
		});
	}

private:
	// Called with the table locked.
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

} // namespace

std::unique_ptr<Consumer> make_consumer(std::shared_ptr<Runtime> rt, std::shared_ptr<Buffer> b)
{
	return std::make_unique<ConsumerImpl>(std::move(rt), std::move(b));
}

} // namespace dpi::detail
