// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "buffers.hpp"

#include <cerrno>

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
