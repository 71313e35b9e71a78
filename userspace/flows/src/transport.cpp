// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Flow transports: in-process bounded queues, and libdpi append buffers.
#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <atomic>
#include <condition_variable>
#include <set>
#include <thread>

namespace dpi::flow
{

using Clock = std::chrono::steady_clock;

struct Counters {
	std::atomic<uint64_t> messages{0}, flushes{0}, bytes{0}, stalls{0};
	void fill(TransportStats &s) const
	{
		s.messages = messages.load();
		s.flushes = flushes.load();
		s.bytes = bytes.load();
		s.stalls = stalls.load();
	}
};

// ---------------------------------------------------------------------------
struct MemChannel {
	int owner = -1;
	uint32_t capacity = 8; // messages in flight per sink
	std::mutex mu;
	std::condition_variable cv;
	struct Item {
		uint64_t sink;
		InMessage msg;
	};
	std::deque<Item> queue;
	std::unordered_map<uint64_t, uint32_t> inflight;
	std::unordered_map<uint64_t, int> open_sinks; // sink id -> sending node, until closed
	std::set<uint64_t> crashed;
	bool dead = false;
};

class MemHub
{
public:
	std::mutex mu;
	std::condition_variable cv;
	std::unordered_map<std::string, std::shared_ptr<MemChannel>> channels;
	std::atomic<uint64_t> next_sink{1};

	std::shared_ptr<MemChannel> find(const std::string &name, Millis wait)
	{
		std::unique_lock<std::mutex> g(mu);
		auto deadline = Clock::now() + wait;
		for (;;) {
			auto it = channels.find(name);
			if (it != channels.end())
				return it->second;
			if (cv.wait_until(g, deadline) == std::cv_status::timeout)
				throw Error(Errc::unknown_buffer, "no flow channel '" + name + "'");
		}
	}
};

std::shared_ptr<MemHub> mem_hub()
{
	return std::make_shared<MemHub>();
}

namespace
{
constexpr Millis find_wait{30000};

class MemSink final : public Sink
{
public:
	MemSink(std::shared_ptr<MemChannel> ch, int node, uint64_t id, std::shared_ptr<Counters> c)
	    : ch_(std::move(ch)), node_(node), id_(id), c_(std::move(c))
	{
		std::lock_guard<std::mutex> g(ch_->mu);
		ch_->open_sinks[id_] = node_;
	}
	~MemSink() override = default;
	MemSink(const MemSink &) = delete;
	MemSink &operator=(const MemSink &) = delete;
	void send(View msg) override
	{
		if (closed_)
			throw Error(Errc::closed, "flow sink already closed");
		std::unique_lock<std::mutex> g(ch_->mu);
		uint32_t &n = ch_->inflight[id_];
		if (n >= ch_->capacity && !ch_->dead) {
			c_->stalls++;
			ch_->cv.wait(g, [&] { return ch_->inflight[id_] < ch_->capacity || ch_->dead; });
		}
		if (ch_->dead)
			throw Error(Errc::connection_lost, "flow channel owner is gone");
		if (ch_->crashed.contains(id_))
			throw Error(Errc::connection_lost, "this node crashed (mem_crash)");
		ch_->inflight[id_]++;
		ch_->queue.push_back({id_, {node_, Bytes(msg.begin(), msg.end()), id_, false, {}}});
		c_->messages++;
		c_->bytes += msg.size();
		ch_->cv.notify_all();
	}
	void flush() override
	{
		std::lock_guard<std::mutex> g(ch_->mu);
		if (ch_->dead)
			throw Error(Errc::connection_lost, "flow channel owner is gone");
		c_->flushes++;
	}
	void close() override
	{
		if (closed_)
			return;
		closed_ = true;
		std::lock_guard<std::mutex> g(ch_->mu);
		ch_->open_sinks.erase(id_);
		if (ch_->dead) // what flush() would have said
			throw Error(Errc::connection_lost, "flow channel owner is gone");
	}

private:
	std::shared_ptr<MemChannel> ch_;
	int node_;
	uint64_t id_;
	std::shared_ptr<Counters> c_; // shared: a sink may outlive its transport
	bool closed_ = false;
};

class MemInbox final : public Inbox
{
public:
	explicit MemInbox(std::shared_ptr<MemChannel> ch) : ch_(std::move(ch)) {}
	std::optional<InMessage> next(Millis wait) override
	{
		std::unique_lock<std::mutex> g(ch_->mu);
		if (!ch_->cv.wait_for(g, wait, [&] { return !ch_->queue.empty(); }))
			return std::nullopt;
		auto item = std::move(ch_->queue.front());
		ch_->queue.pop_front();
		if (!item.msg.aborted)
			ch_->inflight[item.sink]--;
		ch_->cv.notify_all();
		return std::move(item.msg);
	}

private:
	std::shared_ptr<MemChannel> ch_;
};

class MemTransport final : public Transport
{
public:
	MemTransport(std::shared_ptr<MemHub> hub, int id) : hub_(std::move(hub)), id_(id) {}
	[[nodiscard]] int node_id() const noexcept override { return id_; }
	void create(const std::string &name, int owner, size_t, uint32_t segments) override
	{
		std::lock_guard<std::mutex> g(hub_->mu);
		auto &ch = hub_->channels[name];
		if (!ch) {
			ch = std::make_shared<MemChannel>();
			ch->owner = owner;
			ch->capacity = segments ? segments : 1;
		} else if (ch->owner != owner) {
			throw Error(Errc::invalid_argument,
			            "flow channel '" + name + "' already exists on node " + std::to_string(ch->owner));
		}
		hub_->cv.notify_all();
	}
	std::unique_ptr<Sink> sink(const std::string &name, int) override
	{
		return std::make_unique<MemSink>(hub_->find(name, find_wait), id_, hub_->next_sink++, c_);
	}
	std::unique_ptr<Inbox> inbox(const std::string &name) override
	{
		auto ch = hub_->find(name, find_wait);
		if (ch->owner != id_)
			throw Error(Errc::not_local,
			            "flow channel '" + name + "' is owned by node " + std::to_string(ch->owner));
		return std::make_unique<MemInbox>(ch);
	}
	[[nodiscard]] TransportStats stats() const override
	{
		TransportStats s;
		c_->fill(s);
		return s;
	}

private:
	std::shared_ptr<MemHub> hub_;
	int id_;
	std::shared_ptr<Counters> c_ = std::make_shared<Counters>();
};

// ---------------------------------------------------------------------------
class DpiSink final : public Sink
{
public:
	DpiSink(std::unique_ptr<Appender> a, std::shared_ptr<Counters> c) : a_(std::move(a)), c_(std::move(c)) {}
	void send(View msg) override
	{
		if (msg.size() > a_->max_append())
			throw Error(Errc::too_large, "flow message of " + std::to_string(msg.size()) +
			                                     " bytes exceeds the channel's segment (max " +
			                                     std::to_string(a_->max_append()) + ")");
		a_->append(msg);
		c_->messages++;
		c_->bytes += msg.size();
	}
	void flush() override
	{
		a_->flush();
		c_->flushes++;
	}
	void close() override { a_->close(); }

private:
	std::unique_ptr<Appender> a_;
	std::shared_ptr<Counters> c_; // shared: a sink may outlive its transport
};

class DpiInbox final : public Inbox
{
public:
	DpiInbox(std::unique_ptr<Consumer> c, std::unique_ptr<Inbox> local) : c_(std::move(c)), local_(std::move(local))
	{
	}
	std::optional<InMessage> next(Millis wait) override
	{
		auto deadline = Clock::now() + wait;
		for (;;) {
			// Alternate between the local queue and the rings so neither starves.
			if (turn_++ % 2 == 0) {
				if (auto m = local_->next(Millis(0)))
					return local(std::move(*m));
				if (auto r = c_->next(Millis(0)))
					return copy(*r);
			} else {
				if (auto r = c_->next(Millis(0)))
					return copy(*r);
				if (auto m = local_->next(Millis(0)))
					return local(std::move(*m));
			}
			// Idle: everything visible was consumed, so an aborted ring has
			// nothing left to deliver.  Report each aborted ring once.
			if (auto a = aborted())
				return a;
			auto now = Clock::now();
			if (now >= deadline)
				return std::nullopt;
			auto slice = std::min<Millis>(Millis(5), std::chrono::duration_cast<Millis>(deadline - now));
			if (auto r = c_->next(slice))
				return copy(*r);
		}
	}

private:
	static InMessage copy(const Record &r)
	{
		return {r.source_node, Bytes(r.data.begin(), r.data.end()), r.source, false, {}};
	}
	static InMessage local(InMessage m)
	{
		m.sink |= uint64_t{1} << 32;
		return m;
	}
	std::optional<InMessage> aborted()
	{
		auto now = Clock::now();
		if (now < next_check_)
			return std::nullopt;
		next_check_ = now + Millis(20);
		for (const SourceInfo &s : c_->sources()) {
			if (s.state != SourceState::aborted || !reported_.insert(s.source).second)
				continue;
			return InMessage{s.node, {}, s.source, true, s.reason};
		}
		return std::nullopt;
	}
	std::unique_ptr<Consumer> c_;
	std::unique_ptr<Inbox> local_;
	unsigned turn_ = 0;
	Clock::time_point next_check_{};
	std::set<uint32_t> reported_;
};

class DpiTransport final : public Transport
{
public:
	explicit DpiTransport(std::shared_ptr<Node> node)
	    : node_(std::move(node)), local_(mem_transport(mem_hub(), node_->id()))
	{
	}
	[[nodiscard]] int node_id() const noexcept override { return node_->id(); }
	void create(const std::string &name, int owner, size_t segment_size, uint32_t segments) override
	{
		BufferOptions o;
		o.kind = BufferKind::append;
		o.segment_size = segment_size;
		o.segments = segments;
		node_->create_buffer(name, owner, o);
		if (owner == node_->id())
			local_->create(name, owner, segment_size, segments);
	}
	std::unique_ptr<Sink> sink(const std::string &name, int owner) override
	{
		if (owner == node_->id())
			return local_->sink(name, owner);
		auto deadline = Clock::now() + find_wait;
		for (;;) {
			try {
				return std::make_unique<DpiSink>(node_->appender(name), c_);
			} catch (const Error &e) {
				if (e.code() != Errc::unknown_buffer || Clock::now() > deadline)
					throw;
			}
			std::this_thread::sleep_for(Millis(50));
		}
	}
	std::unique_ptr<Inbox> inbox(const std::string &name) override
	{
		return std::make_unique<DpiInbox>(node_->consumer(name, find_wait), local_->inbox(name));
	}
	[[nodiscard]] TransportStats stats() const override
	{
		TransportStats s;
		c_->fill(s);
		TransportStats l = local_->stats();
		s.messages += l.messages;
		s.flushes += l.flushes;
		s.bytes += l.bytes;
		s.stalls += l.stalls;
		Stats d = node_->stats();
		s.stalls += d.credit_stalls;
		s.dpi_posted_wrs = d.posted_wrs;
		s.dpi_segments = d.segments_sealed;
		s.dpi_appends = d.appends;
		return s;
	}

private:
	std::shared_ptr<Node> node_;
	std::shared_ptr<Transport> local_;
	std::shared_ptr<Counters> c_ = std::make_shared<Counters>();
};
} // namespace

std::shared_ptr<Transport> mem_transport(std::shared_ptr<MemHub> hub, int node_id)
{
	return std::make_shared<MemTransport>(std::move(hub), node_id);
}

void mem_kill(const std::shared_ptr<MemHub> &hub, int node_id)
{
	std::lock_guard<std::mutex> g(hub->mu);
	for (auto &[name, ch] : hub->channels) {
		if (ch->owner != node_id)
			continue;
		std::lock_guard<std::mutex> c(ch->mu);
		ch->dead = true;
		ch->queue.clear();
		ch->cv.notify_all();
	}
}

void mem_crash(const std::shared_ptr<MemHub> &hub, int node_id)
{
	mem_kill(hub, node_id);
	std::lock_guard<std::mutex> g(hub->mu);
	for (auto &[name, ch] : hub->channels) {
		std::lock_guard<std::mutex> c(ch->mu);
		if (ch->dead)
			continue;
		for (auto it = ch->open_sinks.begin(); it != ch->open_sinks.end();) {
			if (it->second != node_id) {
				++it;
				continue;
			}
			ch->crashed.insert(it->first);
			ch->queue.push_back(
			        {it->first,
			         {node_id, {}, it->first, true, "node " + std::to_string(node_id) + " crashed"}});
			it = ch->open_sinks.erase(it);
		}
		ch->cv.notify_all();
	}
}

std::shared_ptr<Transport> dpi_transport(std::shared_ptr<Node> node)
{
	if (!node || node->id() < 0)
		throw Error(Errc::invalid_argument,
		            "flows need a DPI node with an id (anonymous nodes cannot host targets)");
	return std::make_shared<DpiTransport>(std::move(node));
}

} // namespace dpi::flow
