// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Primary/backup log shipping on a replicate flow with quorum acks.  Node 0
// (the primary) broadcasts log records to the backups (nodes 1..N-1); each
// backup appends a record to its log file and fdatasync()s it before it
// acknowledges it (manual acks).  The last backup crashes (SIGKILL, so nothing
// is cleaned up) after --kill-after records.  The flow tolerates the loss of a
// target, so the primary keeps going; at the end it checks, from the backups'
// log files, that every record it saw acknowledged by a quorum is durable on
// at least that many backups, and that the survivors hold the whole log in
// order.
//
//   flows-logship --spec FILE --id I --nodes N --logdir DIR [--records 1000]
//                 [--quorum 1] [--kill-after 300] [--local 1]
#include "common.hpp"

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>
#include <vector>

using namespace dpi::flow;
using flowapp::num;
using flowapp::opt;

namespace
{
std::string record(uint64_t i)
{
	// Variable-size records.
	return "rec " + std::to_string(i) + " " +
	       std::string(static_cast<size_t>(20 + mix64(i) % 200), static_cast<char>('a' + i % 26));
}

FlowSpec log_spec(int nodes, uint32_t quorum)
{
	FlowSpec f;
	f.name = "logship";
	for (int i = 1; i < nodes; i++)
		f.targets.push_back(i);
	f.sources = 1;
	f.dist = Dist::broadcast();
	f.hint = Hint::latency;
	f.ack.enabled = true;
	f.ack.quorum = quorum;
	f.ack.automatic = false;
	f.tolerate_target_loss = true;
	return f;
}

std::string log_path(const std::string &dir, int node)
{
	return dir + "/backup" + std::to_string(node) + ".log";
}

std::vector<std::string> read_log(const std::string &path)
{
	std::vector<std::string> v;
	std::ifstream in(path);
	std::string line;
	while (std::getline(in, line))
		v.push_back(line);
	return v;
}

int backup(const std::shared_ptr<Transport> &tr, int nodes, const std::string &dir, uint64_t kill_after,
           bool really_kill, const std::shared_ptr<MemHub> &hub)
{
	int me = tr->node_id();
	auto spec = log_spec(nodes, 1);
	auto t = flowapp::retry([&] { return Target::open(tr, spec, static_cast<size_t>(me - 1)); });
	int fd = ::open(log_path(dir, me).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		throw std::runtime_error("cannot create " + log_path(dir, me));
	bool victim = me == nodes - 1 && kill_after > 0;
	uint64_t n = 0;
	for (const Delivered &d : *t) {
		if (victim && n == kill_after) {
			if (really_kill)
				::raise(SIGKILL); // a crash: no close, no goodbye
			::close(fd);
			mem_kill(hub, me);
			return 0;
		}
		std::string line(reinterpret_cast<const char *>(d.data.data()), d.data.size());
		line += '\n';
		if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()) || ::fdatasync(fd) != 0)
			throw std::runtime_error("log write failed");
		n++;
		t->ack(d.source, d.seq + 1); // durable: acknowledge
	}
	::close(fd);
	std::fprintf(stderr, "backup %d: %llu records\n", me, static_cast<unsigned long long>(n));
	return 0;
}

int primary(const std::shared_ptr<Transport> &tr, int nodes, const std::string &dir, uint64_t records, uint32_t quorum,
            uint64_t kill_after, const std::string &tag)
{
	auto spec = log_spec(nodes, quorum);
	auto src = flowapp::retry([&] { return Source::open(tr, spec, 0); });
	std::vector<uint64_t> acked_at; // watermark seen after each push
	for (uint64_t i = 0; i < records; i++) {
		std::string r = record(i);
		src->push({reinterpret_cast<const std::byte *>(r.data()), r.size()});
		acked_at.push_back(src->acked());
	}
	src->close();
	bool all = src->wait_acked(records, std::chrono::seconds(60));
	uint64_t acked = src->acked();
	// Check durability against the backups' logs.
	auto backups = static_cast<size_t>(nodes - 1);
	std::vector<std::vector<std::string>> logs;
	logs.reserve(backups);
	for (int b = 1; b < nodes; b++)
		logs.push_back(read_log(log_path(dir, b)));
	uint32_t need = quorum == 0 ? static_cast<uint32_t>(backups) : quorum;
	uint64_t lost = 0;
	for (uint64_t i = 0; i < acked; i++) {
		uint32_t have = 0;
		for (const auto &l : logs)
			if (i < l.size() && l[i] == record(i))
				have++;
		if (have < need)
			lost++;
	}
	bool survivors_full = true;
	for (size_t b = 0; b + 1 < backups || (kill_after == 0 && b < backups); b++) {
		if (logs[b].size() != records)
			survivors_full = false;
		for (size_t i = 0; i < logs[b].size() && i < records; i++)
			if (logs[b][i] != record(i))
				survivors_full = false;
	}
	size_t victim_len = logs.back().size();
	char buf[300];
	std::snprintf(buf, sizeof(buf),
	              "%llu records to %zu backups, quorum %u, backup %d killed after %llu: acked %llu, "
	              "acknowledged-but-not-durable %llu, victim log %zu records, targets lost %llu, "
	              "acked after record 100: %llu",
	              static_cast<unsigned long long>(records), backups, need, nodes - 1,
	              static_cast<unsigned long long>(kill_after), static_cast<unsigned long long>(acked),
	              static_cast<unsigned long long>(lost), victim_len,
	              static_cast<unsigned long long>(src->stats().targets_lost),
	              static_cast<unsigned long long>(acked_at.size() > 100 ? acked_at[100] : 0));
	bool ok = all && acked == records && lost == 0 && survivors_full &&
	          (kill_after == 0 || (victim_len <= kill_after && src->stats().targets_lost == 1));
	flowapp::result(ok, tag, buf);
	return ok ? 0 : 1;
}
} // namespace

int main(int argc, char **argv)
{
	auto args = flowapp::parse_args(argc, argv);
	int nodes = static_cast<int>(num(args, "nodes", 3));
	std::string tag = opt(args, "name", "flows.logship");
	std::string dir = opt(args, "logdir", "/tmp");
	auto records = static_cast<uint64_t>(num(args, "records", 1000));
	auto quorum = static_cast<uint32_t>(num(args, "quorum", 1));
	auto kill_after = static_cast<uint64_t>(num(args, "kill-after", 300));
	if (nodes < 3) {
		flowapp::result(false, tag, "needs at least 3 nodes (a primary, a survivor, a victim)");
		return 1;
	}
	try {
		if (num(args, "local", 0)) {
			auto hub = mem_hub();
			std::vector<std::thread> th;
			std::vector<int> rcs(static_cast<size_t>(nodes));
			for (int i = 1; i < nodes; i++)
				th.emplace_back([&, i] {
					try {
						rcs[static_cast<size_t>(i)] = backup(mem_transport(hub, i), nodes, dir,
						                                     kill_after, false, hub);
					} catch (const std::exception &e) {
						flowapp::result(false, tag, std::string("backup error: ") + e.what());
						rcs[static_cast<size_t>(i)] = 1;
					}
				});
			rcs[0] = primary(mem_transport(hub, 0), nodes, dir, records, quorum, kill_after, tag);
			for (auto &t : th)
				t.join();
			return *std::max_element(rcs.begin(), rcs.end());
		}
		auto node = flowapp::start_node(args);
		auto tr = dpi_transport(node);
		int rc = node->id() == 0 ? primary(tr, nodes, dir, records, quorum, kill_after, tag)
		                         : backup(tr, nodes, dir, kill_after, true, nullptr);
		// No flow barrier: the victim is gone.  The primary finishes last (it
		// waits for the survivors' acks), so nobody needs it afterwards.
		node->shutdown();
		return rc;
	} catch (const std::exception &e) {
		flowapp::result(false, tag, std::string("node error: ") + e.what());
		return 1;
	}
}
