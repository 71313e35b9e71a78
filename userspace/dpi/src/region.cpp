// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "region.hpp"

#include "buffers.hpp"
#include "conn.hpp"
#include "runtime.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace dpi::detail
{

using proto::Msg;
using proto::Type;

namespace
{

constexpr size_t bounce_size = size_t{256} * 1024;

class RegionImpl final : public Region
{
public:
	RegionImpl(std::shared_ptr<Runtime> rt, const std::string &name) : rt_(std::move(rt)), name_(name)
	{
		int owner = rt_->lookup(name);
		if (owner == rt_->id()) {
			local_ = rt_->table().local_region(name);
			size_ = local_->opts.region_size;
			return;
		}
		Msg m = proto::make(Type::open_region);
		m.set_text(name);
		Msg r = rt_->call(owner, m, &c_);
		raddr_ = r.addr;
		rkey_ = r.rkey;
		size_ = r.region_size;
		crit_ = rt_->critical_size();
		bounce_ = alloc_touched(bounce_size);
		// iWARP: an RDMA Read's sink must be remotely writable
		bmr_.reset(ibv_reg_mr(c_->pd(), bounce_.get(), bounce_size,
		                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
		if (!bmr_)
			fail_sys("ibv_reg_mr (bounce buffer)", errno);
	}

	[[nodiscard]] size_t size() const noexcept override { return size_; }

	void write(size_t offset, std::span<const std::byte> data) override
	{
		check(offset, data.size());
		if (local_) {
			std::memcpy(local_->region.get() + offset, data.data(), data.size());
			return;
		}
		transfer(offset, const_cast<std::byte *>(data.data()), data.size(), true);
	}

	void read(size_t offset, std::span<std::byte> out) override
	{
		check(offset, out.size());
		if (local_) {
			std::memcpy(out.data(), local_->region.get() + offset, out.size());
			return;
		}
		transfer(offset, out.data(), out.size(), false);
	}

private:
	void check(size_t offset, size_t len) const
	{
		if (offset > size_ || len > size_ - offset)
			throw Error(Errc::out_of_bounds, std::to_string(len) + " bytes at offset " +
			                                         std::to_string(offset) + " of region '" + name_ +
			                                         "' (" + std::to_string(size_) + " bytes)");
	}

	void transfer(size_t offset, std::byte *p, size_t len, bool is_write)
	{
		auto deadline = deadline_after(rt_->op_timeout());
		if (len >= crit_) {
			int access = is_write ? 0 : IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
			MrPtr mr(ibv_reg_mr(c_->pd(), p, len, access));
			if (mr) {
				uint64_t s = is_write ? c_->write(p, mr->lkey, len, raddr_ + offset, rkey_, true)
				                      : c_->read(p, mr->lkey, len, raddr_ + offset, rkey_);
				c_->wait_done(s, deadline);
				return;
			}
		}
		for (size_t done = 0; done < len;) {
			size_t n = std::min(bounce_size, len - done);
			uint64_t s = 0;
			if (is_write) {
				std::memcpy(bounce_.get(), p + done, n);
				s = c_->write(bounce_.get(), bmr_->lkey, n, raddr_ + offset + done, rkey_, true);
				c_->wait_done(s, deadline);
			} else {
				s = c_->read(bounce_.get(), bmr_->lkey, n, raddr_ + offset + done, rkey_);
				c_->wait_done(s, deadline);
				std::memcpy(p + done, bounce_.get(), n);
			}
			done += n;
		}
	}

	std::shared_ptr<Runtime> rt_;
	std::string name_;
	std::shared_ptr<Buffer> local_;
	std::shared_ptr<Conn> c_;
	uint64_t raddr_ = 0;
	uint32_t rkey_ = 0;
	size_t size_ = 0;
	size_t crit_ = 0;
	MemPtr bounce_;
	MrPtr bmr_;
};

} // namespace

std::unique_ptr<Region> make_region(std::shared_ptr<Runtime> rt, const std::string &name)
{
	return std::make_unique<RegionImpl>(std::move(rt), name);
}

} // namespace dpi::detail
