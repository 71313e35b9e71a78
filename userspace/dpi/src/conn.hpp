// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// One RC connection to a peer: its verbs objects, the registered message
// slots, the send queue accounting (unsignaled WRs with periodic signaling),
// the receive reservations, requests waiting for replies, the credits of the
// rings this side appends to, and the rings this side hosts for the peer.
#pragma once

#include "counters.hpp"
#include "proto.hpp"
#include "util.hpp"
#include <dpi-internal/verbs.hpp>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace dpi::detail
{

struct Ring;

inline constexpr uint32_t sq_depth = 512;
inline constexpr uint32_t rq_depth = 1024;
inline constexpr uint32_t base_recvs = 64;
inline constexpr uint32_t msg_slots = 64;
inline constexpr uint32_t max_requests = 32;

class Conn
{
public:
	// Called once, on the thread that saw the connection die.
	using DeathHandler = std::function<void(Conn &)>;

	Conn(Counters &counters, DeathHandler on_death, int peer, std::string desc);
	Conn(const Conn &) = delete;
	Conn &operator=(const Conn &) = delete;
	~Conn();

	// Takes `id` (resolved, or from a connect request), points its context
	// here and creates the completion channel, CQs, QP and message buffers on
	// `pd`, then posts the base receives.  On an exception, teardown() frees
	// whatever was made.
	void open(CmIdPtr id, ibv_pd *pd);
	// The one teardown: frees the QP, message MRs, CQs and channel in
	// dependency order, detaches the id from this connection and hands it
	// back, for the caller to destroy when rdma_cm allows it.
	CmIdPtr teardown() noexcept;
	// The runtime is shutting down: fail every waiter and drop hosted rings.
	void end(const std::string &reason);

	[[nodiscard]] int peer() const noexcept { return peer_; }
	[[nodiscard]] const std::string &desc() const noexcept { return desc_; }
	[[nodiscard]] rdma_cm_id *cm_id() const noexcept { return id_.get(); }
	[[nodiscard]] ibv_pd *pd() const noexcept { return pd_; }
	[[nodiscard]] int channel_fd() const noexcept { return rch_->fd; }
	// Responder resources / initiator depth this device allows (1..16).
	[[nodiscard]] uint8_t rd_atom() const noexcept { return rd_atom_; }
	// The device reports remote atomics (atomic_cap other than ATOMIC_NONE).
	[[nodiscard]] bool atomics() const noexcept { return atomics_; }
	[[nodiscard]] const std::string &device() const noexcept { return device_; }

	void set_up() noexcept { up_ = true; }
	[[nodiscard]] bool up() const noexcept { return up_.load(); }
	[[nodiscard]] bool dead() const noexcept { return dead_.load(); }
	// Messages received from the peer so far.
	[[nodiscard]] uint64_t received() const noexcept { return received_.load(); }
	void mark_dead(const std::string &reason);

	// Sends one control message from a registered slot.
	uint64_t send_msg(const proto::Msg &m, bool force_signal = false);
	// One RDMA Write / Read of a single local buffer; returns the WR's sequence.
	uint64_t write(const void *local, uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey, bool signal);
	uint64_t read(void *local, uint32_t lkey, size_t len, uint64_t raddr, uint32_t rkey);
	// A signaled 8-byte fetch-and-add of `add` on the remote word; the
	// original value lands in `local`.  Returns the WR's sequence, or 0 with
	// `post_err` set when the provider refused the post (EOPNOTSUPP: the
	// connection does not carry atomics).
	uint64_t fetch_add(void *local, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t add, int &post_err);
	// Waits until WR `seq` itself (a fetch_add) completed.
	// wait_done() is not enough for those: swiwarp completes the Writes and
	// Sends posted after an outstanding Read or Atomic when they are handed
	// to TCP, before that Read's or Atomic's response arrived.
	void wait_result(uint64_t seq, Deadline deadline);
	// Waits until the send queue completed WR `seq` (and so all before it).
	void wait_done(uint64_t seq, Deadline deadline);
	// Sends `m` as a request and waits for its reply; an error reply throws.
	proto::Msg request(proto::Msg m, std::chrono::milliseconds timeout, uint64_t *seq_out = nullptr,
	                   bool signal = false);

	// Adds `n` receives to this connection's reservation and posts them.
	void reserve_recvs(uint32_t n);
	// Progress thread: takes the completion event and hands every received
	// message to `handle`; a failure there kills the connection.
	void drain_recvs(const std::function<void(const proto::Msg &)> &handle);

	// A reply arrived: wake its request.  A `joined` reply first makes room
	// for that ring's credits.
	void complete(const proto::Msg &reply);
	// The owner freed `n` segments of ring `ring`, which this side appends to.
	void add_credits(uint64_t ring, uint64_t n);
	// Waits for credits of `ring`: returns them (and resets the count), or 0
	// at `deadline`.  Calls `on_stall` once if it had to wait.
	uint64_t take_credits(uint64_t ring, Deadline deadline, const std::function<void()> &on_stall);

	// Rings this side hosts for the peer (the peer appends to them).
	void add_hosted(const std::shared_ptr<Ring> &r);
	[[nodiscard]] std::shared_ptr<Ring> hosted(uint64_t ring) const;
	[[nodiscard]] std::vector<std::shared_ptr<Ring>> hosted_rings() const;

	// Why the connection died ("" while alive).
	[[nodiscard]] std::string why() const;

private:
	struct Pending {
		bool done = false;
		proto::Msg reply{};
	};

	[[nodiscard]] proto::Msg *rslot(uint64_t i) const { return reinterpret_cast<proto::Msg *>(rbuf_.get()) + i; }
	[[nodiscard]] proto::Msg *sslot(uint64_t i) const { return reinterpret_cast<proto::Msg *>(sbuf_.get()) + i; }
	void check_alive();
	void post_recv(uint64_t slot) const;
	void top_up_recvs(); // mu_ held
	void poll_send_locked();
	// Polls the send CQ until `done()` (called with smu_ held) is true;
	// a timeout or a dead connection throws.
	void wait_send(const std::function<bool()> &done, Deadline deadline);
	uint64_t post_locked(ibv_send_wr &wr, bool signal, int *post_err = nullptr);
	uint64_t post_rdma(ibv_wr_opcode opcode, const void *local, uint32_t lkey, size_t len, uint64_t raddr,
	                   uint32_t rkey, bool signal);

	Counters &counters_;
	DeathHandler on_death_;
	const int peer_;
	const std::string desc_;
	ibv_pd *pd_ = nullptr; // owned by the pool, which outlives every connection's verbs objects
	uint8_t rd_atom_ = 1;
	bool atomics_ = false;
	std::string device_;

	// Verbs objects, declared so that they are released in dependency order
	// (last declared, first released); teardown() uses the same order.
	CmIdPtr id_;
	CompChannelPtr rch_;
	CqPtr rcq_;
	CqPtr scq_;
	QpOwner qp_;
	MemPtr rbuf_;
	MemPtr sbuf_;
	MrPtr rmr_;
	MrPtr smr_;

	// send side, under smu_
	std::mutex smu_;
	uint64_t posted_ = 0;
	uint64_t last_signaled_ = 0;
	uint64_t completed_ = 0;
	uint64_t nmsgs_ = 0;
	std::set<uint64_t> result_wanted_; // fetch_add WRs not completed yet
	std::set<uint64_t> result_done_;   // ... completed, not yet waited for
	std::array<uint64_t, msg_slots> slot_seq_{};

	// receive side: posted by the progress thread, reservations under mu_
	uint32_t recvs_posted_ = 0;
	uint32_t recvs_reserved_ = base_recvs;

	// state, pending requests, credits and hosted rings; under mu_
	mutable std::mutex mu_;
	std::condition_variable cv_;
	std::atomic<bool> up_{false};
	std::atomic<bool> dead_{false};
	std::atomic<uint64_t> received_{0};
	std::string why_;
	uint32_t next_req_ = 1;
	uint32_t inflight_ = 0;
	std::map<uint32_t, Pending> pending_;
	std::map<uint64_t, uint64_t> credits_; // ring -> segments returned, not yet taken
	std::map<uint64_t, std::shared_ptr<Ring>> hosted_;
};

} // namespace dpi::detail
