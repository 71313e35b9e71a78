// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// libdpi internal interface: owners for the verbs and rdma_cm objects that
// libdpi and the `dpi` tool create (header-only).  Each kind has exactly one
// owner type, and every object is held by one from the moment it
// exists, so an exception thrown half way through a connection setup frees
// what was made so far.  The release order between objects is the owner's
// (a struct's members die in reverse order of declaration): an MR before its
// memory and PD, a QP before its CQs and its cm_id, a cm_id before its event
// channel.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>
#include <utility>

namespace dpi::detail
{

// Calls `Release` on a non-null pointer; the C functions' return codes only
// report objects still in use, which the release order above rules out.
template <auto Release> struct Releaser {
	template <class T> void operator()(T *p) const noexcept
	{
		if (p)
			(void)Release(p);
	}
};

using PdPtr = std::unique_ptr<ibv_pd, Releaser<ibv_dealloc_pd>>;
using MrPtr = std::unique_ptr<ibv_mr, Releaser<ibv_dereg_mr>>;
using CqPtr = std::unique_ptr<ibv_cq, Releaser<ibv_destroy_cq>>;
using CompChannelPtr = std::unique_ptr<ibv_comp_channel, Releaser<ibv_destroy_comp_channel>>;
using ContextPtr = std::unique_ptr<ibv_context, Releaser<ibv_close_device>>;
using DeviceListPtr = std::unique_ptr<ibv_device *, Releaser<ibv_free_device_list>>;
using CmIdPtr = std::unique_ptr<rdma_cm_id, Releaser<rdma_destroy_id>>;
using EventChannelPtr = std::unique_ptr<rdma_event_channel, Releaser<rdma_destroy_event_channel>>;
using AddrInfoPtr = std::unique_ptr<rdma_addrinfo, Releaser<rdma_freeaddrinfo>>;

// The QP of an rdma_cm id.  rdma_cm keeps the ibv_qp inside the id and
// destroys it through the id, so the owner holds the id (not owning it: the
// id's CmIdPtr must outlive this).
class QpOwner
{
public:
	QpOwner() = default;
	QpOwner(const QpOwner &) = delete;
	QpOwner &operator=(const QpOwner &) = delete;
	QpOwner(QpOwner &&o) noexcept : id_(std::exchange(o.id_, nullptr)) {}
	QpOwner &operator=(QpOwner &&o) noexcept
	{
		if (this != &o) {
			reset();
			id_ = std::exchange(o.id_, nullptr);
		}
		return *this;
	}
	~QpOwner() { reset(); }

	// rdma_create_qp on `id`; returns its result (0 or -1 with errno set).
	int create(rdma_cm_id *id, ibv_pd *pd, ibv_qp_init_attr *attr)
	{
		reset();
		int rc = rdma_create_qp(id, pd, attr);
		if (rc == 0)
			id_ = id;
		return rc;
	}
	void reset() noexcept
	{
		if (id_)
			rdma_destroy_qp(id_);
		id_ = nullptr;
	}
	[[nodiscard]] ibv_qp *get() const noexcept { return id_ ? id_->qp : nullptr; }

private:
	rdma_cm_id *id_ = nullptr;
};

} // namespace dpi::detail
