// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Finding the cluster: a spec file, or the launcher's PMIx server
// (Documentation/dpi.md, "Finding the cluster").  The PMIx calls themselves
// are in pmix.cpp; this file holds the decisions and the value encoding,
// which the unit tests check without a PMIx server.
#include "launch.hpp"

#include <cstdio>
#include <cstdlib>

namespace dpi
{

ClusterSource choose_cluster_source(bool spec_given, bool pmix_env)
{
	if (spec_given)
		return ClusterSource::spec_file;
	if (pmix_env)
		return ClusterSource::pmix;
	throw Error(Errc::spec_error, "no PMIx server (and DPI_CLUSTER is not set): start the process with "
	                              "mpirun or srun --mpi=pmix, or name a cluster spec file in DPI_CLUSTER");
}

bool pmix_environment()
{
	auto set = [](const char *v) {
		const char *s = std::getenv(v);
		return s && *s;
	};
	return set("PMIX_NAMESPACE") || set("PMIX_RANK");
}

std::string encode_node_address(const NodeAddress &a)
{
	if (a.id < 0 || a.host.empty())
		throw Error(Errc::invalid_argument, "a node address needs an id and a host");
	bool v6 = a.host.find(':') != std::string::npos;
	std::string s = "node " + std::to_string(a.id) + " " + (v6 ? "[" + a.host + "]" : a.host) + ":" +
	                std::to_string(a.port);
	if (!a.device.empty())
		s += " device=" + a.device;
	return s;
}

NodeAddress decode_node_address(std::string_view value, int rank)
{
	std::string origin = "rank " + std::to_string(rank) + "'s address";
	if (value.find('\n') != std::string_view::npos)
		throw Error(Errc::spec_error, origin + " '" + std::string(value) + "' has more than one line");
	ClusterSpec one;
	try {
		one = ClusterSpec::parse(value, origin);
	} catch (const Error &e) {
		throw Error(Errc::spec_error, "rank " + std::to_string(rank) + " published a bad address '" +
		                                      std::string(value) + "': " + e.detail());
	}
	const NodeAddress &a = one.nodes().front();
	if (a.id != rank)
		throw Error(Errc::spec_error, "rank " + std::to_string(rank) + " published the address of node " +
		                                      std::to_string(a.id) + ": '" + std::string(value) + "'");
	return a;
}

ClusterSpec spec_from_addresses(const std::vector<NodeAddress> &nodes, std::string_view origin)
{
	std::string text;
	for (const auto &n : nodes)
		text += encode_node_address(n) + "\n";
	return ClusterSpec::parse(text, origin);
}

Launch launch_from_env(const std::string &spec_path, std::optional<int> node_id)
{
	std::string path = spec_path;
	if (path.empty())
		if (const char *p = std::getenv("DPI_CLUSTER"))
			path = p;
	Launch l;
	bool pmix = pmix_environment();
	// srun gives a step PMIx only with --mpi=pmix (or MpiDefault=pmix); its
	// default, none, leaves a job id but no PMIx variables.  Say that rather
	// than suggest a launcher the user already runs under.
	if (const char *job = std::getenv("SLURM_JOB_ID"); path.empty() && !pmix && job && *job)
		throw Error(Errc::spec_error, std::string("no PMIx server (and DPI_CLUSTER is not set): Slurm job ") +
		                                      job +
		                                      " started this process without PMIx: run it with "
		                                      "srun --mpi=pmix (or set MpiDefault=pmix in "
		                                      "slurm.conf), or name a cluster spec file in DPI_CLUSTER");
	l.source = choose_cluster_source(!path.empty(), pmix);
	if (l.source == ClusterSource::spec_file) {
		l.spec = ClusterSpec::load(path);
		l.origin = "spec file " + path;
		if (node_id) {
			l.node_id = *node_id;
		} else if (const char *v = std::getenv("DPI_NODE_ID"); v && *v) {
			char *end = nullptr;
			long x = std::strtol(v, &end, 10);
			if (*end || x < -1 || x > 65535)
				throw Error(Errc::invalid_argument,
				            std::string("DPI_NODE_ID='") + v + "' is not a node id");
			l.node_id = static_cast<int>(x);
		}
	} else {
		l = detail::pmix_launch();
		if (node_id && *node_id != l.node_id)
			throw Error(Errc::invalid_argument, "node id " + std::to_string(*node_id) +
			                                            " was asked for, but PMIx gives rank " +
			                                            std::to_string(l.node_id));
	}
	if (const char *v = std::getenv("DPI_VERBOSE"); v && *v && *v != '0') {
		const NodeAddress *me = l.spec.find(l.node_id);
		std::string at = me ? " at " + me->host + ":" + std::to_string(me->port) +
		                                 (me->device.empty() ? "" : " device=" + me->device)
		                    : "";
		std::fprintf(stderr, "dpi: cluster from %s: %zu nodes, this is node %d%s\n", l.origin.c_str(),
		             l.spec.nodes().size(), l.node_id, at.c_str());
	}
	return l;
}

} // namespace dpi
