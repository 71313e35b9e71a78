// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "pool.hpp"

#include <cerrno>

namespace dpi::detail
{

ibv_pd *ConnPool::pd_for(ibv_context *ctx)
{
	std::lock_guard<std::mutex> g(mu_);
	auto &pd = pds_[ctx];
	if (!pd) {
		pd.reset(ibv_alloc_pd(ctx));
		if (!pd) {
			pds_.erase(ctx);
			fail_sys("ibv_alloc_pd", errno);
		}
	}
	return pd.get();
}

ibv_pd *ConnPool::any_pd() const
{
	std::lock_guard<std::mutex> g(mu_);
	return pds_.empty() ? nullptr : pds_.begin()->second.get();
}

std::shared_ptr<Conn> ConnPool::to(int node, const Connector &connect)
{
	std::lock_guard<std::mutex> cg(connect_mu_);
	{
		std::lock_guard<std::mutex> g(mu_);
		auto it = out_.find(node);
		if (it != out_.end() && !it->second->dead())
			return it->second;
	}
	auto c = connect();
	std::lock_guard<std::mutex> g(mu_);
	out_[node] = c;
	return c;
}

void ConnPool::add(const std::shared_ptr<Conn> &c)
{
	std::lock_guard<std::mutex> g(mu_);
	all_.push_back(c);
}

std::shared_ptr<Conn> ConnPool::find(const Conn *c) const
{
	std::lock_guard<std::mutex> g(mu_);
	for (const auto &x : all_)
		if (x.get() == c)
			return x;
	return nullptr;
}

std::vector<std::shared_ptr<Conn>> ConnPool::take_all()
{
	std::lock_guard<std::mutex> g(mu_);
	auto conns = std::move(all_);
	all_.clear();
	out_.clear();
	return conns;
}

void ConnPool::release_pds()
{
	std::lock_guard<std::mutex> g(mu_);
	pds_.clear();
}

} // namespace dpi::detail
