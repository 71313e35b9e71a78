// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Flow sources and targets over a Transport.
#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <set>
#include <system_error>
#include <thread>

namespace dpi::flow
{

namespace
{
using Clock = std::chrono::steady_clock;
constexpr size_t ad_size = 24; // the header fields that do not change with the codecs

std::string data_channel(const FlowSpec &s, size_t i)
{
	return s.name + ".t" + std::to_string(i);
}
std::string ack_channel(const FlowSpec &s, uint32_t source)
{
	return s.name + ".a" + std::to_string(source);
}

uint64_t default_group(View t)
{
	uint64_t k = 0;
	for (size_t i = 0; i < 8 && i < t.size(); i++)
		k |= static_cast<uint64_t>(t[i]) << (8 * i);
	return k;
}

void check_spec(FlowSpec &spec)
{
	spec.validate();
	if (!spec.group)
		spec.group = default_group;
	if (spec.ack.enabled && spec.reduce && spec.reduce->where == Placement::source)
		throw Error(Errc::invalid_argument, "flow '" + spec.name +
		                                            "': acknowledgements need tuples to reach targets; a "
		                                            "source-side reducer replaces them with partials");
}

// Builds header + codec'd payload.
Bytes make_message(const FlowSpec &spec, MsgHeader h, View payload, FlowStats &st)
{
	// Without a codec the payload goes straight into the message: one copy.
	View body = payload;
	Bytes cur;
	if (!spec.codecs.empty()) {
		std::byte hb[MsgHeader::size];
		h.payload = 0;
		h.encode(hb);
		cur.assign(payload.begin(), payload.end());
		Bytes tmp;
		for (const auto &c : spec.codecs) {
			c->encode(cur, tmp, View(hb, ad_size));
			cur.swap(tmp);
		}
		body = cur;
	}
	if (body.size() > UINT32_MAX)
		throw Error(Errc::too_large, "flow message too large");
	h.payload = static_cast<uint32_t>(body.size());
	Bytes msg(MsgHeader::size + body.size());
	h.encode(msg.data());
	if (!body.empty()) // an empty view's data() may be null: memcpy(null, 0) is UB
		std::memcpy(msg.data() + MsgHeader::size, body.data(), body.size());
	st.raw_bytes += payload.size();
	st.payload_bytes += body.size();
	st.messages++;
	return msg;
}

// ---------------------------------------------------------------------------
class SourceImpl final : public Source
{
public:
	SourceImpl(std::shared_ptr<Transport> tr, FlowSpec spec, uint32_t id)
	    : tr_(std::move(tr)), spec_(std::move(spec)), id_(id), tracker_(spec_.targets.size(), spec_.ack.quorum)
	{
		check_spec(spec_);
		size_t r = spec_.targets.size();
		if (spec_.ack.enabled) {
			// The ack channel must exist before any target can answer.
			tr_->create(ack_channel(spec_, id_), tr_->node_id(), 64U << 10, 16);
			acks_ = tr_->inbox(ack_channel(spec_, id_));
		}
		batches_.resize(r);
		dead_.assign(r, false);
		for (size_t i = 0; i < r; i++) {
			tr_->create(data_channel(spec_, i), spec_.targets[i], spec_.segment_size, spec_.segments);
			sinks_.push_back(tr_->sink(data_channel(spec_, i), spec_.targets[i]));
		}
		// Started last: a constructor that throws must not leave it running.
		if (acks_)
			ack_thread_ = std::thread([this] { ack_loop(); });
	}
	~SourceImpl() override
	{
		try {
			close();
		} catch (...) { // NOLINT(bugprone-empty-catch): destructors must not throw
		}
		stop_ = true;
		if (ack_thread_.joinable())
			ack_thread_.join();
	}
	SourceImpl(const SourceImpl &) = delete;
	SourceImpl &operator=(const SourceImpl &) = delete;

	uint64_t push(View tuple) override
	{
		if (closed_)
			throw Error(Errc::closed, "flow '" + spec_.name + "' source already closed");
		st_.tuples_in++;
		View t = tuple;
		for (const auto &m : spec_.maps) {
			if (m.where != Placement::source)
				continue;
			Bytes &out = (t.data() == scratch_[0].data()) ? scratch_[1] : scratch_[0];
			if (!m.fn(t, out))
				return register_tuple({});
			t = out;
		}
		uint64_t key = spec_.group(t);
		if (spec_.reduce && spec_.reduce->where == Placement::source) {
			partial_.add(key, spec_.reduce->value(t));
			if (partial_.size() >= spec_.reduce->partial_capacity)
				spill_partials((partial_.size() + 1) / 2);
			return st_.tuples_in - 1;
		}
		spec_.dist.targets(key, spec_.targets.size(), dests_);
		uint64_t g = register_tuple(dests_);
		for (uint32_t d : dests_)
			add(d, MsgType::data, t);
		if (spec_.hint == Hint::latency) {
			for (uint32_t d : dests_) {
				emit(d);
				guarded(d, [&] { sinks_[d]->flush(); });
				st_.flushes++;
			}
		}
		return g;
	}

	void flush() override
	{
		for (size_t i = 0; i < sinks_.size(); i++)
			emit(i);
		for (size_t i = 0; i < sinks_.size(); i++) {
			guarded(i, [&] { sinks_[i]->flush(); });
			st_.flushes++;
		}
	}

	void close() override
	{
		if (closed_)
			return;
		if (spec_.reduce && spec_.reduce->where == Placement::source)
			spill_partials(partial_.size());
		for (size_t i = 0; i < sinks_.size(); i++) {
			emit(i);
			MsgHeader h;
			h.type = MsgType::end;
			h.source = id_;
			h.source_node = tr_->node_id();
			h.first_seq = batches_[i].next_seq;
			Bytes m = make_message(spec_, h, {}, st_);
			guarded(i, [&] { sinks_[i]->send(m); });
		}
		closed_ = true;
		close_sinks();
	}

	[[nodiscard]] uint64_t acked() const override
	{
		std::lock_guard<std::mutex> g(mu_);
		return tracker_.watermark();
	}

	bool wait_acked(uint64_t n, Millis timeout) override
	{
		if (!spec_.ack.enabled)
			throw Error(Errc::invalid_argument, "flow '" + spec_.name + "' has no acknowledgements");
		std::unique_lock<std::mutex> g(mu_);
		bool ok = cv_.wait_for(g, timeout, [&] { return tracker_.watermark() >= n || !ack_error_.empty(); });
		if (!ack_error_.empty())
			throw Error(Errc::protocol, ack_error_);
		return ok;
	}

	[[nodiscard]] KeyAck key_ack(uint64_t key) const override
	{
		std::lock_guard<std::mutex> g(mu_);
		auto it = keys_.find(key);
		return it == keys_.end() ? KeyAck{} : it->second.state;
	}

	bool wait_key(uint64_t key, Millis timeout) override
	{
		if (!spec_.ack.key)
			throw Error(Errc::invalid_argument, "flow '" + spec_.name + "' has no ack keys");
		std::unique_lock<std::mutex> g(mu_);
		bool ok = cv_.wait_for(g, timeout, [&] {
			auto it = keys_.find(key);
			return (it != keys_.end() && it->second.state.acked) || !ack_error_.empty();
		});
		if (!ack_error_.empty())
			throw Error(Errc::protocol, ack_error_);
		return ok;
	}

	[[nodiscard]] size_t keys_acked() const override
	{
		std::lock_guard<std::mutex> g(mu_);
		return keys_done_;
	}

	[[nodiscard]] FlowStats stats() const override { return st_; }

private:
	struct KeyEntry {
		uint64_t targets_mask = 0; // flows have at most 64 targets
		KeyAck state;
	};
	struct Batch {
		MsgType type = MsgType::data;
		Bytes payload;
		uint32_t count = 0;
		uint64_t first_seq = 0;
		uint64_t next_seq = 0;
	};

	// A sink's close is a round trip to its target (it returns once the
	// target has taken everything sent before it).  One target after the
	// other, those add up with the number of targets and made up most of a
	// small exchange (Documentation/benchmarks-flows.md); side by side they
	// cost about one.  Errors are judged afterwards, one target at a time,
	// as guarded() judges them.
	void close_sinks()
	{
		std::vector<std::exception_ptr> err(sinks_.size());
		auto close_one = [&](size_t i) {
			try {
				sinks_[i]->close();
			} catch (...) {
				err[i] = std::current_exception();
			}
		};
		std::vector<std::thread> side;
		for (size_t i = 1; i < sinks_.size(); i++) {
			if (dead_[i])
				continue;
			try {
				side.emplace_back(close_one, i);
			} catch (const std::system_error &) { // no thread to be had: close it here
				close_one(i);
			}
		}
		if (!sinks_.empty() && !dead_[0])
			close_one(0);
		for (auto &t : side)
			t.join();
		for (size_t i = 0; i < sinks_.size(); i++) {
			st_.flushes++;
			if (err[i])
				guarded(i, [&] { std::rethrow_exception(err[i]); });
		}
	}

	// Runs a sink operation; with tolerate_target_loss a broken target is
	// dropped (once) instead of failing the source.
	template <class F> void guarded(size_t d, F f)
	{
		if (dead_[d])
			return;
		try {
			f();
		} catch (const Error &e) {
			bool lost = e.code() == Errc::connection_lost || e.code() == Errc::unreachable;
			if (!spec_.tolerate_target_loss || !lost)
				throw;
			dead_[d] = true;
			st_.targets_lost++;
		}
	}

	uint64_t register_tuple(std::span<const uint32_t> dests)
	{
		if (!spec_.ack.enabled)
			return next_global_++;
		std::lock_guard<std::mutex> g(mu_);
		uint64_t s = tracker_.sent(dests);
		cv_.notify_all();
		return s;
	}

	void add(size_t d, MsgType type, View item)
	{
		Batch &b = batches_[d];
		size_t item_size =
		        type == MsgType::partial ? Aggregate::wire_size : item.size() + (spec_.tuple_size ? 0 : 4);
		if (b.count && (b.type != type || b.payload.size() + item_size > spec_.batch_bytes))
			emit(d);
		b.type = type;
		if (type == MsgType::partial)
			b.payload.insert(b.payload.end(), item.begin(), item.end());
		else
			pack_tuple(b.payload, item, spec_.tuple_size);
		b.count++;
		b.next_seq++;
		if (type == MsgType::partial)
			st_.partials_sent++;
		else
			st_.tuples_sent++;
	}

	void emit(size_t d)
	{
		Batch &b = batches_[d];
		if (!b.count)
			return;
		MsgHeader h;
		h.type = b.type;
		h.source = id_;
		h.source_node = tr_->node_id();
		h.first_seq = b.first_seq;
		h.count = b.count;
		Bytes m = make_message(spec_, h, b.payload, st_);
		guarded(d, [&] { sinks_[d]->send(m); });
		b.payload.clear();
		b.first_seq += b.count;
		b.count = 0;
	}

	void spill_partials(size_t n)
	{
		std::byte rec[Aggregate::wire_size];
		for (const Aggregate &a : partial_.evict_coldest(n)) {
			spec_.dist.targets(a.key, spec_.targets.size(), dests_);
			a.encode(rec);
			for (uint32_t d : dests_)
				add(d, MsgType::partial, View(rec, sizeof(rec)));
		}
	}

	void ack_loop()
	{
		while (!stop_) {
			std::optional<InMessage> m;
			try {
				m = acks_->next(Millis(50));
				if (!m)
					continue;
				// A target that vanished just stops acknowledging; quorum
				// acks tell what the others hold.
				if (m->aborted)
					continue;
				MsgHeader h = MsgHeader::decode(m->data);
				if (h.type != MsgType::ack || h.source != id_)
					throw Error(Errc::protocol, "unexpected message on ack channel");
				std::lock_guard<std::mutex> g(mu_);
				tracker_.acked(h.count, h.first_seq);
				merge_keys(h.count, View(m->data).subspan(MsgHeader::size));
				cv_.notify_all();
			} catch (const Error &e) {
				std::lock_guard<std::mutex> g(mu_);
				ack_error_ = e.what();
				cv_.notify_all();
				return;
			}
		}
	}

	// Called with mu_ held: (u64 key, u64 tuples) pairs acknowledged by target t.
	void merge_keys(uint32_t t, View p)
	{
		if (p.size() % 16 != 0)
			throw Error(Errc::protocol, "ack key payload of " + std::to_string(p.size()) + " bytes");
		if (!p.empty() && !spec_.ack.key)
			throw Error(Errc::protocol, "ack keys in a flow without F_ack");
		size_t r = spec_.targets.size();
		uint32_t need = spec_.ack.key_quorum ? spec_.ack.key_quorum : static_cast<uint32_t>(r);
		for (size_t o = 0; o < p.size(); o += 16) {
			uint64_t key = 0;
			uint64_t n = 0;
			std::memcpy(&key, p.data() + o, 8);
			std::memcpy(&n, p.data() + o + 8, 8);
			KeyEntry &e = keys_[key];
			uint64_t bit = uint64_t{1} << t;
			if (!(e.targets_mask & bit)) {
				e.targets_mask |= bit;
				e.state.targets++;
			}
			e.state.tuples += n;
			if (!e.state.acked && e.state.targets >= need) {
				e.state.acked = true;
				keys_done_++;
			}
		}
	}

	std::shared_ptr<Transport> tr_;
	FlowSpec spec_;
	uint32_t id_;
	std::vector<std::unique_ptr<Sink>> sinks_;
	std::vector<Batch> batches_;
	std::vector<bool> dead_;
	std::vector<uint32_t> dests_;
	Bytes scratch_[2];
	Aggregator partial_;
	FlowStats st_;
	bool closed_ = false;
	uint64_t next_global_ = 0;

	mutable std::mutex mu_;
	std::condition_variable cv_;
	AckTracker tracker_;
	std::string ack_error_;
	std::unordered_map<uint64_t, KeyEntry> keys_;
	size_t keys_done_ = 0;
	std::unique_ptr<Inbox> acks_;
	std::atomic<bool> stop_{false};
	std::thread ack_thread_;
};

// ---------------------------------------------------------------------------
class TargetImpl final : public Target
{
public:
	TargetImpl(std::shared_ptr<Transport> tr, FlowSpec spec, size_t index)
	    : tr_(std::move(tr)), spec_(std::move(spec)), index_(index)
	{
		check_spec(spec_);
		if (index_ >= spec_.targets.size())
			throw Error(Errc::invalid_argument, "target index " + std::to_string(index_) + " of flow '" +
			                                            spec_.name + "' with " +
			                                            std::to_string(spec_.targets.size()) + " targets");
		if (spec_.targets[index_] != tr_->node_id())
			throw Error(Errc::not_local, "target " + std::to_string(index_) + " of flow '" + spec_.name +
			                                     "' is node " + std::to_string(spec_.targets[index_]));
		tr_->create(data_channel(spec_, index_), tr_->node_id(), spec_.segment_size, spec_.segments);
		inbox_ = tr_->inbox(data_channel(spec_, index_));
	}

	std::optional<Delivered> next(Millis wait) override
	{
		auto deadline = Clock::now() + wait;
		for (;;) {
			while (pos_ < views_.size()) {
				size_t i = pos_++;
				View t = views_[i];
				bool keep = true;
				for (const auto &m : spec_.maps) {
					if (m.where != Placement::target)
						continue;
					Bytes &out = (t.data() == mapped_[0].data()) ? mapped_[1] : mapped_[0];
					if (!m.fn(t, out)) {
						keep = false;
						break;
					}
					t = out;
				}
				if (keep && spec_.ack.enabled && spec_.ack.key)
					pending_keys_[cur_.source].emplace_back(cur_.first_seq + i, spec_.ack.key(t));
				if (pos_ == views_.size())
					auto_ack();
				if (!keep)
					continue;
				st_.tuples_in++;
				return Delivered{cur_.source, cur_.source_node, cur_.first_seq + i, t};
			}
			if (ended_)
				return std::nullopt;
			auto now = Clock::now();
			auto left = now >= deadline ? Millis(0) : std::chrono::duration_cast<Millis>(deadline - now);
			auto m = inbox_->next(left);
			if (!m)
				return std::nullopt;
			process(*m);
		}
	}

	[[nodiscard]] bool ended() const override { return ended_ && pos_ >= views_.size(); }

	std::vector<Aggregate> results(Millis wait) override
	{
		if (!spec_.reduce)
			throw Error(Errc::invalid_argument, "flow '" + spec_.name + "' has no reducer");
		auto deadline = Clock::now() + wait;
		while (!ended()) {
			auto now = Clock::now();
			if (now >= deadline)
				throw Error(Errc::timeout,
				            "flow '" + spec_.name + "' did not end: " + std::to_string(ends_.size()) +
				                    " of " + std::to_string(spec_.sources) + " sources closed, " +
				                    std::to_string(crashed_.size()) + " crashed");
			next(std::chrono::duration_cast<Millis>(deadline - now));
		}
		return agg_.snapshot();
	}

	void ack(uint32_t source, uint64_t upto) override
	{
		auto it = source_node_.find(source);
		if (it == source_node_.end())
			throw Error(Errc::invalid_argument, "no tuples from source " + std::to_string(source) + " yet");
		// F_ack: the keys of this source's tuples with seq < upto, with counts.
		std::map<uint64_t, uint64_t> keys;
		auto pk = pending_keys_.find(source);
		if (pk != pending_keys_.end()) {
			auto &q = pk->second;
			while (!q.empty() && q.front().first < upto) {
				keys[q.front().second]++;
				q.pop_front();
			}
		}
		if (gone_.contains(source))
			return; // it vanished: nobody reads its acknowledgements
		MsgHeader h;
		h.type = MsgType::ack;
		h.source = source;
		h.source_node = tr_->node_id();
		h.first_seq = upto;
		h.count = static_cast<uint32_t>(index_);
		h.payload = static_cast<uint32_t>(keys.size() * 16);
		Bytes m(MsgHeader::size + h.payload);
		h.encode(m.data());
		size_t o = MsgHeader::size;
		for (auto [k, n] : keys) {
			std::memcpy(m.data() + o, &k, 8);
			std::memcpy(m.data() + o + 8, &n, 8);
			o += 16;
		}
		try {
			auto &sink = ack_sinks_[source];
			if (!sink)
				sink = tr_->sink(ack_channel(spec_, source), it->second);
			sink->send(m);
			sink->flush();
		} catch (const Error &e) {
			// A source that crashed after sending cannot take acks any more;
			// that is not this target's failure.
			if (e.code() != Errc::connection_lost && e.code() != Errc::unreachable)
				throw;
			gone_.insert(source);
			ack_sinks_.erase(source);
			return;
		}
		st_.messages++;
	}

	[[nodiscard]] FlowStats stats() const override { return st_; }

	[[nodiscard]] std::vector<Crashed> crashed() const override { return crashed_; }

private:
	void auto_ack()
	{
		if (spec_.ack.enabled && spec_.ack.automatic && cur_.type == MsgType::data)
			ack(cur_.source, cur_.first_seq + cur_.count);
	}

	void source_vanished(const InMessage &m)
	{
		Crashed c;
		c.node = m.source_node;
		c.reason = m.reason;
		auto it = sink_source_.find(m.sink);
		if (it != sink_source_.end()) {
			c.source = it->second;
			if (ends_.contains(c.source))
				return; // it had ended the flow properly
			c.delivered = order_.expected(c.source);
			gone_.insert(c.source);
		}
		std::string who =
		        c.source == UINT32_MAX ? "a source that sent nothing" : "source " + std::to_string(c.source);
		if (spec_.on_source_crash == OnSourceCrash::fail)
			throw Error(Errc::connection_lost,
			            "flow '" + spec_.name + "': " + who + " (node " + std::to_string(c.node) +
			                    ") vanished without closing after " + std::to_string(c.delivered) +
			                    " tuples: " + c.reason);
		crashed_.push_back(c);
		if (spec_.sources && ends_.size() + crashed_.size() >= spec_.sources)
			ended_ = true;
	}

	void process(const InMessage &m)
	{
		if (m.aborted) {
			source_vanished(m);
			return;
		}
		MsgHeader h = MsgHeader::decode(m.data);
		if (h.type == MsgType::ack)
			throw Error(Errc::protocol, "acknowledgement on a data channel");
		if (ends_.contains(h.source))
			throw Error(Errc::protocol, "source " + std::to_string(h.source) + " sent after its end");
		source_node_[h.source] = h.source_node;
		sink_source_[m.sink] = h.source;
		if (h.type == MsgType::end) {
			if (h.first_seq != order_.expected(h.source))
				throw Error(Errc::protocol, "source " + std::to_string(h.source) + " ended after " +
				                                    std::to_string(h.first_seq) + " items, " +
				                                    std::to_string(order_.expected(h.source)) +
				                                    " arrived");
			ends_.insert(h.source);
			if (spec_.sources && ends_.size() >= spec_.sources)
				ended_ = true;
			return;
		}
		order_.accept(h.source, h.first_seq, h.count);
		st_.messages++;
		payload_.assign(m.data.begin() + MsgHeader::size, m.data.end());
		Bytes tmp;
		// Undo the codecs last to first.  A counting loop, not
		// std::views::reverse: clang-tidy 14 (make tidy) cannot parse
		// libstdc++ 12's <ranges>, and it rewrites reverse iterators to it.
		for (size_t i = spec_.codecs.size(); i > 0; i--) {
			spec_.codecs[i - 1]->decode(payload_, tmp, View(m.data.data(), ad_size));
			payload_.swap(tmp);
		}
		if (h.type == MsgType::partial) {
			if (!spec_.reduce)
				throw Error(Errc::protocol, "partial aggregates in a flow without a reducer");
			if (payload_.size() != size_t{h.count} * Aggregate::wire_size)
				throw Error(Errc::protocol, "partial message size does not match its count");
			for (uint32_t i = 0; i < h.count; i++)
				agg_.merge(Aggregate::decode(payload_.data() + size_t{i} * Aggregate::wire_size));
			return;
		}
		auto views = unpack_tuples(payload_, h.count, spec_.tuple_size);
		if (spec_.reduce) {
			for (View t : views)
				agg_.add(spec_.group(t), spec_.reduce->value(t));
			return;
		}
		cur_ = h;
		views_ = std::move(views);
		pos_ = 0;
	}

	std::shared_ptr<Transport> tr_;
	FlowSpec spec_;
	size_t index_;
	std::unique_ptr<Inbox> inbox_;
	OrderCheck order_;
	std::set<uint32_t> ends_;
	std::unordered_map<uint32_t, int> source_node_;
	std::unordered_map<uint32_t, std::unique_ptr<Sink>> ack_sinks_;
	std::unordered_map<uint64_t, uint32_t> sink_source_;
	std::unordered_map<uint32_t, std::deque<std::pair<uint64_t, uint64_t>>> pending_keys_;
	std::set<uint32_t> gone_;
	std::vector<Crashed> crashed_;
	bool ended_ = false;
	MsgHeader cur_;
	Bytes payload_;
	std::vector<View> views_;
	size_t pos_ = 0;
	Bytes mapped_[2];
	Aggregator agg_;
	FlowStats st_;
};
} // namespace

std::unique_ptr<Source> Source::open(std::shared_ptr<Transport> tr, FlowSpec spec, uint32_t id)
{
	return std::make_unique<SourceImpl>(std::move(tr), std::move(spec), id);
}

std::unique_ptr<Target> Target::open(std::shared_ptr<Transport> tr, FlowSpec spec, size_t index)
{
	return std::make_unique<TargetImpl>(std::move(tr), std::move(spec), index);
}

} // namespace dpi::flow
