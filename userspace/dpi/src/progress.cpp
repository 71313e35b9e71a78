// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "progress.hpp"

#include <array>
#include <cerrno>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace dpi::detail
{

Progress::~Progress()
{
	stop();
	close();
}

void Progress::open(rdma_event_channel *ech)
{
	ech_ = ech;
	int fl = fcntl(ech_->fd, F_GETFL);
	fcntl(ech_->fd, F_SETFL, fl | O_NONBLOCK);
	epfd_ = epoll_create1(EPOLL_CLOEXEC);
	stopfd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (epfd_ < 0 || stopfd_ < 0)
		fail_sys("epoll/eventfd", errno);
	// tags: nullptr is the CM channel, &stopfd_ the stop signal, else a Conn
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.ptr = nullptr;
	epoll_ctl(epfd_, EPOLL_CTL_ADD, ech_->fd, &ev);
	ev.data.ptr = &stopfd_;
	epoll_ctl(epfd_, EPOLL_CTL_ADD, stopfd_, &ev);
}

void Progress::start(CmHandler on_cm, ConnFinder find, Dispatch dispatch)
{
	on_cm_ = std::move(on_cm);
	find_ = std::move(find);
	dispatch_ = std::move(dispatch);
	thread_ = std::thread([this] { run(); });
}

void Progress::watch(Conn &c) const
{
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.ptr = &c;
	if (epoll_ctl(epfd_, EPOLL_CTL_ADD, c.channel_fd(), &ev))
		fail_sys("epoll_ctl", errno);
}

void Progress::stop()
{
	stopping_ = true;
	if (stopfd_ >= 0) {
		uint64_t one = 1;
		(void)!::write(stopfd_, &one, sizeof one);
	}
	if (thread_.joinable())
		thread_.join();
}

void Progress::close()
{
	if (epfd_ >= 0)
		::close(epfd_);
	if (stopfd_ >= 0)
		::close(stopfd_);
	epfd_ = stopfd_ = -1;
}

void Progress::run()
{
	std::array<epoll_event, 16> evs{};
	while (!stopping_.load()) {
		int n = epoll_wait(epfd_, evs.data(), static_cast<int>(evs.size()), 200);
		for (int i = 0; i < n; ++i) {
			void *tag = evs[i].data.ptr;
			if (tag == &stopfd_)
				continue;
			if (tag == nullptr) {
				rdma_cm_event *ev = nullptr;
				while (rdma_get_cm_event(ech_, &ev) == 0) {
					// an id the handler gave up on dies after the ack
					CmIdPtr doomed = on_cm_(ev);
					rdma_ack_cm_event(ev);
				}
				continue;
			}
			std::shared_ptr<Conn> c = find_(static_cast<const Conn *>(tag));
			if (!c)
				continue;
			c->drain_recvs([&](const proto::Msg &m) { dispatch_(c, m); });
		}
	}
}

} // namespace dpi::detail
