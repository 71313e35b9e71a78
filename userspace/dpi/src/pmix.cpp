// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The cluster from the launcher's PMIx server (Open MPI's mpirun): node id =
// rank, job size = nodes, and every rank's address through
// PMIx_Put/Commit/Fence/Get.  Without libpmix at build time pmix_launch()
// only says so.
#include "launch.hpp"
#include "util.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tuple>
#include <vector>

#ifdef DPI_HAVE_PMIX
#include <pmix.h>
#endif

namespace dpi
{

bool pmix_built() noexcept
{
#ifdef DPI_HAVE_PMIX
	return true;
#else
	return false;
#endif
}

namespace detail
{

namespace
{

std::string env_or(const char *name, const std::string &dflt)
{
	const char *v = std::getenv(name);
	return v && *v ? std::string(v) : dflt;
}

// The RDMA device rdma_cm maps this local address to, or "" if none.
std::string device_of(rdma_event_channel *ch, const sockaddr *sa)
{
	rdma_cm_id *id = nullptr;
	if (rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP))
		return {};
	std::string dev;
	if (rdma_bind_addr(id, const_cast<sockaddr *>(sa)) == 0 && id->verbs)
		dev = ibv_get_device_name(id->verbs->device);
	rdma_destroy_id(id);
	return dev;
}

} // namespace

std::pair<std::string, std::string> local_rdma_address()
{
	std::string addr = env_or("DPI_ADDR", "");
	std::string want = env_or("DPI_DEVICE", "");
	if (!addr.empty() && !want.empty())
		return {addr, want};
	int num = 0;
	ibv_device **list = ibv_get_device_list(&num);
	std::vector<std::string> names;
	for (int i = 0; list && i < num; ++i)
		names.emplace_back(ibv_get_device_name(list[i]));
	if (list)
		ibv_free_device_list(list);
	if (names.empty())
		throw Error(Errc::spec_error, "no RDMA device on this host (see 'rdma link'; DPI_ADDR and "
		                              "DPI_DEVICE together skip the lookup)");
	if (!want.empty() && std::find(names.begin(), names.end(), want) == names.end())
		throw Error(Errc::spec_error, "DPI_DEVICE=" + want + " is not an RDMA device on this host");
	if (!addr.empty())
		return {addr, want};
	ifaddrs *ifs = nullptr;
	if (getifaddrs(&ifs))
		fail_sys("getifaddrs", errno);
	std::unique_ptr<ifaddrs, void (*)(ifaddrs *)> guard(ifs, freeifaddrs);
	rdma_event_channel *ch = rdma_create_event_channel();
	if (!ch)
		fail_sys("rdma_create_event_channel", errno);
	std::pair<std::string, std::string> found;
	for (int family : {AF_INET, AF_INET6}) {
		for (ifaddrs *i = ifs; i && found.first.empty(); i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != family)
				continue;
			char buf[INET6_ADDRSTRLEN] = {};
			const void *a = family == AF_INET
			                        ? static_cast<const void *>(
			                                  &reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr)
			                        : static_cast<const void *>(
			                                  &reinterpret_cast<sockaddr_in6 *>(i->ifa_addr)->sin6_addr);
			if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(static_cast<const in6_addr *>(a)))
				continue; // would need a scope id in the spec
			if (!inet_ntop(family, a, buf, sizeof buf))
				continue;
			std::string dev = device_of(ch, i->ifa_addr);
			if (!dev.empty() && (want.empty() || dev == want))
				found = {buf, dev};
		}
	}
	rdma_destroy_event_channel(ch);
	if (found.first.empty())
		throw Error(Errc::spec_error, "no IP address of this host maps to RDMA device " +
		                                      (want.empty() ? names.front() : want) +
		                                      " (give its netdev an address, or set DPI_ADDR)");
	return found;
}

#ifdef DPI_HAVE_PMIX

namespace
{

std::string status(pmix_status_t rc)
{
	return std::string(PMIx_Error_string(rc)) + " (" + std::to_string(rc) + ")";
}

// PMIx_Finalize when the last Launch/Node copy lets go.
struct Session {
	Session() = default;
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;
	~Session() { PMIx_Finalize(nullptr, 0); }
};

} // namespace

Launch pmix_launch()
{
	pmix_proc_t me;
	pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
	if (rc != PMIX_SUCCESS)
		throw Error(Errc::spec_error,
		            "no PMIx server (and DPI_CLUSTER is not set): PMIx_Init failed: " + status(rc));
	auto session = std::make_shared<Session>();
	std::string ns = me.nspace;
	auto value = [&](const pmix_proc_t &who, const char *key, const pmix_info_t *info, size_t ninfo,
	                 pmix_value_t **out) { return PMIx_Get(&who, key, info, ninfo, out); };

	pmix_proc_t job;
	PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
	pmix_value_t *v = nullptr;
	rc = value(job, PMIX_JOB_SIZE, nullptr, 0, &v);
	if (rc != PMIX_SUCCESS || !v || v->type != PMIX_UINT32)
		throw Error(Errc::spec_error, "PMIx namespace " + ns + " has no job size: " + status(rc));
	uint32_t size = v->data.uint32;
	PMIX_VALUE_RELEASE(v);
	if (size == 0 || size > 65536 || me.rank >= size)
		throw Error(Errc::spec_error, "PMIx rank " + std::to_string(me.rank) + " of a job of " +
		                                      std::to_string(size) + " is not a DPI node id");
	uint16_t local_rank = 0;
	v = nullptr;
	if (value(me, PMIX_LOCAL_RANK, nullptr, 0, &v) == PMIX_SUCCESS && v && v->type == PMIX_UINT16)
		local_rank = v->data.uint16;
	if (v)
		PMIX_VALUE_RELEASE(v);

	NodeAddress mine;
	mine.id = static_cast<int>(me.rank);
	std::tie(mine.host, mine.device) = local_rdma_address();
	long base = std::strtol(env_or("DPI_PORT", "7471").c_str(), nullptr, 10);
	if (base < 1 || base + local_rank > 65535)
		throw Error(Errc::invalid_argument, "DPI_PORT=" + env_or("DPI_PORT", "") + " + local rank " +
		                                            std::to_string(local_rank) + " is not a port");
	mine.port = static_cast<uint16_t>(base + local_rank);

	std::string enc = encode_node_address(mine);
	pmix_value_t put;
	PMIX_VALUE_LOAD(&put, enc.c_str(), PMIX_STRING);
	rc = PMIx_Put(PMIX_GLOBAL, pmix_address_key, &put);
	PMIX_VALUE_DESTRUCT(&put);
	if (rc == PMIX_SUCCESS)
		rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS)
		throw Error(Errc::spec_error, "PMIx_Put/Commit of this rank's address failed: " + status(rc));

	int tmo = static_cast<int>(std::strtol(env_or("DPI_PMIX_TIMEOUT", "60").c_str(), nullptr, 10));
	bool collect = true;
	pmix_info_t info[2];
	PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &tmo, PMIX_INT);
	rc = PMIx_Fence(&job, 1, info, 2);
	if (rc != PMIX_SUCCESS)
		throw Error(Errc::spec_error,
		            "PMIx_Fence (address exchange, " + std::to_string(tmo) + " s) failed: " + status(rc));

	std::vector<NodeAddress> nodes;
	for (uint32_t r = 0; r < size; ++r) {
		if (r == me.rank) {
			nodes.push_back(mine);
			continue;
		}
		pmix_proc_t peer;
		PMIX_LOAD_PROCID(&peer, me.nspace, r);
		v = nullptr;
		rc = value(peer, pmix_address_key, &info[1], 1, &v);
		if (rc != PMIX_SUCCESS || !v || v->type != PMIX_STRING || !v->data.string) {
			if (v)
				PMIX_VALUE_RELEASE(v);
			throw Error(Errc::spec_error, "rank " + std::to_string(r) + " published no address (key " +
			                                      pmix_address_key + " in PMIx namespace " + ns +
			                                      ", waited up to " + std::to_string(tmo) +
			                                      " s): " + status(rc));
		}
		std::string got = v->data.string;
		PMIX_VALUE_RELEASE(v);
		nodes.push_back(decode_node_address(got, static_cast<int>(r)));
	}
	PMIX_INFO_DESTRUCT(&info[0]);
	PMIX_INFO_DESTRUCT(&info[1]);

	Launch l;
	l.origin = "PMIx namespace " + ns;
	l.spec = spec_from_addresses(nodes, l.origin);
	l.node_id = static_cast<int>(me.rank);
	l.source = ClusterSource::pmix;
	l.session = std::move(session);
	return l;
}

#else

Launch pmix_launch()
{
	throw Error(Errc::spec_error, "DPI_CLUSTER is not set and this libdpi was built without PMIx support "
	                              "(libpmix-dev was missing at build time), so it cannot ask the launcher");
}

#endif

} // namespace detail
} // namespace dpi
