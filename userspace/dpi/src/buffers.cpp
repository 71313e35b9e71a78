// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "buffers.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>

namespace dpi::detail
{

std::string BufferTable::no_buffer(const std::string &name) const
{
	return "node " + std::to_string(node_id_) + " has no buffer '" + name + "'";
}

BufferTable::Created BufferTable::create(const std::string &name, const BufferOptions &o, ibv_pd *pd)
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = buffers_.find(name);
	if (it != buffers_.end()) {
		if (it->second->opts.kind != o.kind)
			throw Error(Errc::wrong_kind, "buffer '" + name + "' exists with another kind");
		return {it->second->id, true};
	}
	auto b = std::make_shared<Buffer>();
	b->name = name;
	b->id = next_id_++;
	b->opts = o;
	if (o.kind == BufferKind::region) {
		b->region = alloc_touched(o.region_size);
		if (pd) {
			b->region_mr.reset(
			        ibv_reg_mr(pd, b->region.get(), o.region_size,
			                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
			if (!b->region_mr)
				fail_sys("ibv_reg_mr (region '" + name + "')", errno);
		}
	}
	buffers_[name] = b;
	cv_.notify_all();
	return {b->id, false};
}

std::shared_ptr<Buffer> BufferTable::append_buffer(const std::string &name) const
{
	std::shared_ptr<Buffer> b;
	{
		std::lock_guard<std::mutex> g(mu_);
		auto it = buffers_.find(name);
		if (it == buffers_.end())
			throw Error(Errc::unknown_buffer, no_buffer(name));
		b = it->second;
	}
	if (b->opts.kind != BufferKind::append)
		throw Error(Errc::wrong_kind, "'" + name + "' is a region, not an append buffer");
	return b;
}

void BufferTable::add_ring(Buffer &b, const std::shared_ptr<Ring> &r)
{
	{
		std::lock_guard<std::mutex> g(mu_);
		r->id = next_id_++;
		r->index = static_cast<uint32_t>(b.rings.size());
		b.rings.push_back(r);
	}
	cv_.notify_all();
}

std::string BufferTable::announce(Ring &r, uint64_t seq, uint64_t len, const std::string &from)
{
	std::string err;
	{
		std::lock_guard<std::mutex> g(mu_);
		err = r.rd.announce(seq, len);
		if (!err.empty() && r.state == SourceState::open) {
			r.state = SourceState::aborted;
			r.reason = "protocol error from " + from + ": " + err;
		}
	}
	cv_.notify_all();
	return err;
}

uint64_t SharedLog::tail() const
{
	return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(ctl.get())).load(std::memory_order_acquire);
}

void SharedLog::take_satisfied(std::vector<Waiter> &out)
{
	std::erase_if(waiters, [&](const Waiter &w) {
		if (w.needed > rd.head())
			return false;
		out.push_back(w);
		return true;
	});
}

std::optional<uint64_t> BufferTable::room(Ring &r, const std::shared_ptr<Conn> &c, uint32_t req_id, uint64_t needed)
{
	std::lock_guard<std::mutex> g(mu_);
	auto b = r.buffer.lock();
	if (!r.shared || !b || !b->log)
		throw Error(Errc::protocol, "room request on a source without a shared log");
	if (b->log->rd.head() >= needed)
		return b->log->rd.head();
	b->log->waiters.push_back({c, req_id, needed});
	return std::nullopt;
}

std::optional<BufferTable::LogGrant> BufferTable::share_log(Buffer &b, ibv_pd *pd, std::string &why)
{
	std::lock_guard<std::mutex> g(mu_);
	size_t cap = b.opts.segment_size * b.opts.segments;
	if (!b.log) {
		auto l = std::make_unique<SharedLog>(cap);
		l->mem = alloc_touched(cap);
		l->ctl = alloc_touched(8);
		l->mr.reset(ibv_reg_mr(pd, l->mem.get(), cap, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
		if (!l->mr)
			fail_sys("ibv_reg_mr (shared log of '" + b.name + "')", errno);
		l->ctl_mr.reset(ibv_reg_mr(pd, l->ctl.get(), 8, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC));
		if (!l->ctl_mr) {
			why = std::string("the owner cannot register its tail for remote atomics: ") +
			      std::strerror(errno);
			return std::nullopt;
		}
		b.log = std::move(l);
	}
	if (b.log->mr->pd != pd) {
		why = "the owner's log of '" + b.name + "' lives on another device";
		return std::nullopt;
	}
	return LogGrant{reinterpret_cast<uint64_t>(b.log->mem.get()), b.log->mr->rkey,
	                reinterpret_cast<uint64_t>(b.log->ctl.get()), b.log->ctl_mr->rkey, cap};
}

std::string BufferTable::commit(Ring &r, const shared::Packed *ranges, size_t n, const std::string &from)
{
	std::string err;
	{
		std::lock_guard<std::mutex> g(mu_);
		auto b = r.buffer.lock();
		if (!r.shared || !b || !b->log) {
			err = "commit on a source without a shared log";
		} else {
			uint64_t tail = b->log->tail();
			for (size_t i = 0; i < n && err.empty(); ++i) {
				const auto &p = ranges[i];
				err = b->log->rd.commit(p.pos, p.length_flags & ~shared::pad_bit,
				                        (p.length_flags & shared::pad_bit) != 0, r.index, tail);
			}
		}
		if (!err.empty() && r.state == SourceState::open) {
			r.state = SourceState::aborted;
			r.reason = "protocol error from " + from + ": " + err;
			if (b)
				++b->aborted_sources;
		}
	}
	cv_.notify_all();
	return err;
}

void BufferTable::close_ring(Ring &r)
{
	{
		std::lock_guard<std::mutex> g(mu_);
		if (r.state == SourceState::open)
			r.state = SourceState::closed;
	}
	cv_.notify_all();
}

void BufferTable::abort_open(const std::vector<std::shared_ptr<Ring>> &rings, const std::string &reason)
{
	{
		std::lock_guard<std::mutex> g(mu_);
		for (const auto &r : rings)
			if (r->state == SourceState::open) {
				r->state = SourceState::aborted;
				r->reason = reason;
				if (auto b = r->buffer.lock())
					++b->aborted_sources;
			}
	}
	cv_.notify_all();
}

BufferTable::RegionInfo BufferTable::open_region(const std::string &name, ibv_pd *pd)
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = buffers_.find(name);
	if (it == buffers_.end())
		throw Error(Errc::unknown_buffer, no_buffer(name));
	auto &b = *it->second;
	if (b.opts.kind != BufferKind::region)
		throw Error(Errc::wrong_kind, "'" + name + "' is an append buffer, not a region");
	if (!b.region_mr)
		b.region_mr.reset(
		        ibv_reg_mr(pd, b.region.get(), b.opts.region_size,
		                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
	if (!b.region_mr || b.region_mr->pd != pd)
		throw Error(Errc::system, "region '" + name + "' is not registered on this device");
	return {reinterpret_cast<uint64_t>(b.region.get()), b.region_mr->rkey, b.opts.region_size};
}

std::shared_ptr<Buffer> BufferTable::local_region(const std::string &name) const
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = buffers_.find(name);
	if (it == buffers_.end())
		throw Error(Errc::unknown_buffer, "no buffer '" + name + "' on this node");
	if (it->second->opts.kind != BufferKind::region)
		throw Error(Errc::wrong_kind, "'" + name + "' is an append buffer, not a region");
	return it->second;
}

std::optional<int> BufferTable::owner_in(const OwnerMap &owners, const std::string &name) const
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = owners.find(name);
	if (it == owners.end())
		return std::nullopt;
	return it->second;
}

void BufferTable::set_owner(OwnerMap &owners, const std::string &name, int node)
{
	std::lock_guard<std::mutex> g(mu_);
	owners[name] = node;
}

std::optional<int> BufferTable::directory_owner(const std::string &name) const
{
	return owner_in(directory_, name);
}

void BufferTable::enroll(const std::string &name, int node)
{
	set_owner(directory_, name, node);
}

std::optional<int> BufferTable::cached_owner(const std::string &name) const
{
	return owner_in(known_owner_, name);
}

void BufferTable::remember_owner(const std::string &name, int node)
{
	set_owner(known_owner_, name, node);
}

std::shared_ptr<Buffer> BufferTable::claim_consumer(const std::string &name, std::chrono::milliseconds wait)
{
	auto deadline = Clock::now() + wait;
	std::unique_lock<std::mutex> g(mu_);
	for (;;) {
		auto it = buffers_.find(name);
		if (it != buffers_.end()) {
			auto b = it->second;
			if (b->opts.kind != BufferKind::append)
				throw Error(Errc::wrong_kind, "'" + name + "' is a region, not an append buffer");
			if (b->has_consumer)
				throw Error(Errc::invalid_argument, "'" + name + "' already has a consumer");
			b->has_consumer = true;
			return b;
		}
		if (cv_.wait_until(g, deadline) == std::cv_status::timeout && !buffers_.contains(name)) {
			auto d = directory_.find(name);
			if (d != directory_.end() && d->second != node_id_)
				throw Error(Errc::not_local, "'" + name + "' is owned by node " +
				                                     std::to_string(d->second) + "; consume it there");
			throw Error(Errc::unknown_buffer,
			            no_buffer(name) + " (waited " + std::to_string(wait.count()) + " ms)");
		}
	}
}

void BufferTable::release_consumer(Buffer &b)
{
	std::lock_guard<std::mutex> g(mu_);
	b.has_consumer = false;
}

void BufferTable::clear()
{
	std::lock_guard<std::mutex> g(mu_);
	buffers_.clear();
}

} // namespace dpi::detail
