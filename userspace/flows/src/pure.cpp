// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The transport-independent parts of flows: distribution functions,
// aggregates, the message format, ack and order bookkeeping, built-in maps.
#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

namespace dpi::flow
{

namespace
{
void put32(std::byte *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = static_cast<std::byte>(v >> (8 * i));
}
void put64(std::byte *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = static_cast<std::byte>(v >> (8 * i));
}
uint32_t get32(const std::byte *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= static_cast<uint32_t>(p[i]) << (8 * i);
	return v;
}
uint64_t get64(const std::byte *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= static_cast<uint64_t>(p[i]) << (8 * i);
	return v;
}
[[noreturn]] void bad(const std::string &why)
{
	throw Error(Errc::protocol, why);
}
[[noreturn]] void invalid(const std::string &why)
{
	throw Error(Errc::invalid_argument, why);
}
} // namespace

uint64_t mix64(uint64_t x) noexcept
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

// ---------------------------------------------------------------------------
Dist::Dist(std::string name, Fn fn, std::vector<uint64_t> splits)
    : name_(std::move(name)), fn_(std::move(fn)), splits_(std::move(splits))
{
}

Dist Dist::hash()
{
	return {"hash", [](uint64_t key, size_t n, std::vector<uint32_t> &out) {
		        out.push_back(static_cast<uint32_t>(mix64(key) % n));
	        }};
}

Dist Dist::range(std::vector<uint64_t> splits)
{
	if (!std::is_sorted(splits.begin(), splits.end()))
		invalid("range split points must be ascending");
	auto s = splits;
	return {"range",
	        [s](uint64_t key, size_t, std::vector<uint32_t> &out) {
		        auto it = std::upper_bound(s.begin(), s.end(), key);
		        out.push_back(static_cast<uint32_t>(it - s.begin()));
	        },
	        std::move(splits)};
}

Dist Dist::broadcast()
{
	return {"broadcast", [](uint64_t, size_t n, std::vector<uint32_t> &out) {
		        for (size_t i = 0; i < n; i++)
			        out.push_back(static_cast<uint32_t>(i));
	        }};
}

Dist Dist::filter(std::function<bool(uint64_t)> keep, const Dist &then)
{
	if (!keep)
		invalid("filter needs a predicate");
	Fn inner = then.fn_;
	return {"filter+" + then.name_,
	        [keep = std::move(keep), inner](uint64_t key, size_t n, std::vector<uint32_t> &out) {
		        if (keep(key))
			        inner(key, n, out);
	        },
	        then.splits_};
}

Dist Dist::user(Fn fn)
{
	if (!fn)
		invalid("user distribution function is empty");
	return {"user", std::move(fn)};
}

void Dist::targets(uint64_t key, size_t ntargets, std::vector<uint32_t> &out) const
{
	out.clear();
	fn_(key, ntargets, out);
	if (name_ == "user") {
		std::vector<uint32_t> seen = out;
		std::sort(seen.begin(), seen.end());
		if (std::adjacent_find(seen.begin(), seen.end()) != seen.end())
			invalid("user distribution function returned a target twice");
		if (!seen.empty() && seen.back() >= ntargets)
			invalid("user distribution function returned target " + std::to_string(seen.back()) +
			        " of only " + std::to_string(ntargets));
	}
}

void Dist::validate(size_t ntargets) const
{
	if (ntargets == 0)
		invalid("a flow needs at least one target");
	if (!splits_.empty() && splits_.size() != ntargets - 1)
		invalid("range distribution has " + std::to_string(splits_.size()) + " split points for " +
		        std::to_string(ntargets) + " targets (needs R-1)");
	if (name_.ends_with("range") && splits_.empty() && ntargets != 1)
		invalid("range distribution needs R-1 split points");
}

// ---------------------------------------------------------------------------
const char *reduce_name(ReduceOp op) noexcept
{
	switch (op) {
	case ReduceOp::sum: return "SUM";
	case ReduceOp::count: return "COUNT";
	case ReduceOp::min: return "MIN";
	case ReduceOp::max: return "MAX";
	case ReduceOp::avg: return "AVG";
	}
	return "?";
}

void Aggregate::add(int64_t v) noexcept
{
	count++;
	sum += v;
	min = std::min(min, v);
	max = std::max(max, v);
}

void Aggregate::merge(const Aggregate &o) noexcept
{
	count += o.count;
	sum += o.sum;
	min = std::min(min, o.min);
	max = std::max(max, o.max);
}

double Aggregate::value(ReduceOp op) const noexcept
{
	switch (op) {
	case ReduceOp::sum: return static_cast<double>(sum);
	case ReduceOp::count: return static_cast<double>(count);
	case ReduceOp::min: return static_cast<double>(min);
	case ReduceOp::max: return static_cast<double>(max);
	case ReduceOp::avg:
		return count ? static_cast<double>(sum) / static_cast<double>(count)
		             : std::numeric_limits<double>::quiet_NaN();
	}
	return 0;
}

void Aggregate::encode(std::byte *out) const noexcept
{
	put64(out, key);
	put64(out + 8, static_cast<uint64_t>(count));
	put64(out + 16, static_cast<uint64_t>(sum));
	put64(out + 24, static_cast<uint64_t>(min));
	put64(out + 32, static_cast<uint64_t>(max));
}

Aggregate Aggregate::decode(const std::byte *in) noexcept
{
	Aggregate a;
	a.key = get64(in);
	a.count = static_cast<int64_t>(get64(in + 8));
	a.sum = static_cast<int64_t>(get64(in + 16));
	a.min = static_cast<int64_t>(get64(in + 24));
	a.max = static_cast<int64_t>(get64(in + 32));
	return a;
}

void Aggregator::add(uint64_t key, int64_t v)
{
	auto [it, fresh] = table_.try_emplace(key);
	if (fresh)
		it->second.key = key;
	it->second.add(v);
}

void Aggregator::merge(const Aggregate &a)
{
	auto [it, fresh] = table_.try_emplace(a.key, a);
	if (!fresh)
		it->second.merge(a);
}

std::vector<Aggregate> Aggregator::snapshot() const
{
	std::vector<Aggregate> v;
	v.reserve(table_.size());
	for (const auto &kv : table_)
		v.push_back(kv.second);
	std::sort(v.begin(), v.end(), [](const Aggregate &a, const Aggregate &b) { return a.key < b.key; });
	return v;
}

std::vector<Aggregate> Aggregator::evict_coldest(size_t n)
{
	std::vector<Aggregate> all;
	all.reserve(table_.size());
	for (const auto &kv : table_)
		all.push_back(kv.second);
	n = std::min(n, all.size());
	auto colder = [](const Aggregate &a, const Aggregate &b) {
		return a.count != b.count ? a.count < b.count : a.key < b.key;
	};
	std::nth_element(all.begin(), all.begin() + static_cast<ptrdiff_t>(n), all.end(), colder);
	all.resize(n);
	for (const Aggregate &a : all)
		table_.erase(a.key);
	std::sort(all.begin(), all.end(), [](const Aggregate &a, const Aggregate &b) { return a.key < b.key; });
	return all;
}

std::vector<Aggregate> Aggregator::drain()
{
	auto v = snapshot();
	table_.clear();
	return v;
}

// ---------------------------------------------------------------------------
void MsgHeader::encode(std::byte *out) const noexcept
{
	put32(out, magic);
	out[4] = static_cast<std::byte>(type);
	out[5] = static_cast<std::byte>(flags);
	out[6] = std::byte{1};
	out[7] = std::byte{0};
	put32(out + 8, source);
	put32(out + 12, static_cast<uint32_t>(source_node));
	put64(out + 16, first_seq);
	put32(out + 24, count);
	put32(out + 28, payload);
}

MsgHeader MsgHeader::decode(View msg)
{
	if (msg.size() < size)
		bad("flow message of " + std::to_string(msg.size()) + " bytes is shorter than its header");
	const std::byte *p = msg.data();
	if (get32(p) != magic)
		bad("flow message with a bad magic");
	if (p[6] != std::byte{1} || p[7] != std::byte{0})
		bad("flow message header version " + std::to_string(static_cast<int>(p[6])) + " unsupported");
	MsgHeader h;
	auto t = static_cast<uint8_t>(p[4]);
	if (t < 1 || t > 4)
		bad("flow message of unknown type " + std::to_string(t));
	h.type = static_cast<MsgType>(t);
	h.flags = static_cast<uint8_t>(p[5]);
	h.source = get32(p + 8);
	h.source_node = static_cast<int32_t>(get32(p + 12));
	h.first_seq = get64(p + 16);
	h.count = get32(p + 24);
	h.payload = get32(p + 28);
	if (h.payload != msg.size() - size)
		bad("flow message claims " + std::to_string(h.payload) + " payload bytes, carries " +
		    std::to_string(msg.size() - size));
	return h;
}

void pack_tuple(Bytes &out, View t, size_t tuple_size)
{
	if (tuple_size) {
		if (t.size() != tuple_size)
			invalid("tuple of " + std::to_string(t.size()) + " bytes in a flow of fixed " +
			        std::to_string(tuple_size) + "-byte tuples");
	} else {
		if (t.size() > UINT32_MAX)
			invalid("tuple too large");
		size_t o = out.size();
		out.resize(o + 4);
		put32(out.data() + o, static_cast<uint32_t>(t.size()));
	}
	out.insert(out.end(), t.begin(), t.end());
}

std::vector<View> unpack_tuples(View payload, uint32_t count, size_t tuple_size)
{
	std::vector<View> v;
	v.reserve(count);
	size_t off = 0;
	for (uint32_t i = 0; i < count; i++) {
		size_t len = tuple_size;
		if (!tuple_size) {
			if (payload.size() - off < 4)
				bad("truncated variable-size tuple length");
			len = get32(payload.data() + off);
			off += 4;
		}
		if (payload.size() - off < len)
			bad("tuple " + std::to_string(i) + " overruns its message");
		v.push_back(payload.subspan(off, len));
		off += len;
	}
	if (off != payload.size())
		bad("flow message has " + std::to_string(payload.size() - off) + " trailing bytes");
	return v;
}

// ---------------------------------------------------------------------------
AckTracker::AckTracker(size_t ntargets, uint32_t quorum) : ntargets_(ntargets), quorum_(quorum), targets_(ntargets) {}

uint64_t AckTracker::sent(std::span<const uint32_t> dests)
{
	uint64_t g = next_++;
	Entry e;
	auto n = static_cast<uint32_t>(dests.size());
	e.needed = quorum_ == 0 ? n : std::min(quorum_, n);
	for (uint32_t t : dests) {
		if (t >= ntargets_)
			invalid("ack tracker: target index out of range");
		targets_[t].global.push_back(g);
	}
	entries_.push_back(e);
	while (!entries_.empty() && entries_.front().got >= entries_.front().needed) {
		entries_.pop_front();
		watermark_++;
	}
	return g;
}

void AckTracker::acked(uint32_t t, uint64_t upto)
{
	if (t >= ntargets_)
		bad("acknowledgement from unknown target " + std::to_string(t));
	PerTarget &pt = targets_[t];
	if (upto <= pt.acked)
		return; // stale or duplicate (cumulative acks)
	if (upto - pt.acked > pt.global.size())
		bad("target " + std::to_string(t) + " acknowledged " + std::to_string(upto) + " tuples, only " +
		    std::to_string(pt.acked + pt.global.size()) + " were sent to it");
	while (pt.acked < upto) {
		uint64_t g = pt.global.front();
		pt.global.pop_front();
		pt.acked++;
		if (g >= watermark_)
			entries_[g - watermark_].got++;
	}
	while (!entries_.empty() && entries_.front().got >= entries_.front().needed) {
		entries_.pop_front();
		watermark_++;
	}
}

bool AckTracker::is_acked(uint64_t g) const
{
	if (g < watermark_)
		return true;
	if (g >= next_)
		return false;
	const Entry &e = entries_[g - watermark_];
	return e.got >= e.needed;
}

void OrderCheck::accept(uint32_t source, uint64_t first, uint32_t count)
{
	uint64_t &n = next_[source];
	if (first != n)
		bad("source " + std::to_string(source) + " sent sequence " + std::to_string(first) + ", expected " +
		    std::to_string(n) + (first > n ? " (tuples lost)" : " (reordered or repeated)"));
	n += count;
}

uint64_t OrderCheck::expected(uint32_t source) const
{
	auto it = next_.find(source);
	return it == next_.end() ? 0 : it->second;
}

// ---------------------------------------------------------------------------
Map Map::projection(std::vector<std::pair<size_t, size_t>> fields, Placement where)
{
	return {"projection",
	        [fields = std::move(fields)](View in, Bytes &out) {
		        out.clear();
		        for (auto [off, len] : fields) {
			        if (off > in.size() || in.size() - off < len)
				        invalid("projection field [" + std::to_string(off) + ", +" +
				                std::to_string(len) + ") outside a " + std::to_string(in.size()) +
				                "-byte tuple");
			        out.insert(out.end(), in.begin() + static_cast<ptrdiff_t>(off),
			                   in.begin() + static_cast<ptrdiff_t>(off + len));
		        }
		        return true;
	        },
	        where};
}

Map Map::encode(std::shared_ptr<const Codec> c, Placement where)
{
	std::string n = std::string("encode-") + c->name();
	return {n,
	        [c = std::move(c)](View in, Bytes &out) {
		        out.clear();
		        c->encode(in, out, {});
		        return true;
	        },
	        where};
}

Map Map::decode(std::shared_ptr<const Codec> c, Placement where)
{
	std::string n = std::string("decode-") + c->name();
	return {n,
	        [c = std::move(c)](View in, Bytes &out) {
		        out.clear();
		        c->decode(in, out, {});
		        return true;
	        },
	        where};
}

Map Map::user(std::string name, Fn fn, Placement where)
{
	if (!fn)
		invalid("map '" + name + "' has no function");
	return {std::move(name), std::move(fn), where};
}

void FlowSpec::validate() const
{
	if (name.empty() || name.size() > 40)
		invalid("flow name must be 1..40 bytes");
	for (char c : name)
		if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
			invalid("flow name '" + name + "' may only contain [A-Za-z0-9_.-]");
	if (targets.empty())
		invalid("flow '" + name + "' has no targets");
	if (targets.size() > 64)
		invalid("flow '" + name + "' has more than 64 targets");
	dist.validate(targets.size());
	if (reduce && !reduce->value)
		invalid("flow '" + name + "' reducer has no value function");
	if (reduce && reduce->partial_capacity == 0)
		invalid("flow '" + name + "' reducer partial_capacity must be > 0");
	if (batch_bytes == 0 || batch_bytes + MsgHeader::size + 64 > segment_size)
		invalid("flow '" + name + "': batch_bytes must be > 0 and leave room for a header in a " +
		        std::to_string(segment_size) + "-byte segment");
	for (const auto &m : maps)
		if (!m.fn)
			invalid("flow '" + name + "' map '" + m.name + "' has no function");
	if (ack.key && !ack.enabled)
		invalid("flow '" + name + "': ack keys need acknowledgements enabled");
	if (ack.key_quorum > targets.size())
		invalid("flow '" + name + "': key quorum " + std::to_string(ack.key_quorum) + " exceeds its " +
		        std::to_string(targets.size()) + " targets");
}

void Target::iterator::advance()
{
	for (;;) {
		auto d = t_->next(Millis(200));
		if (d) {
			cur_ = *d;
			return;
		}
		if (t_->ended()) {
			t_ = nullptr;
			return;
		}
	}
}

} // namespace dpi::flow
