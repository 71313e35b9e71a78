// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Cluster spec parsing and the error vocabulary.
#include <dpi/dpi.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace dpi
{

const char *errc_name(Errc code) noexcept
{
	switch (code) {
	case Errc::ok: return "ok";
	case Errc::not_initialized: return "not_initialized";
	case Errc::invalid_argument: return "invalid_argument";
	case Errc::spec_error: return "spec_error";
	case Errc::unknown_buffer: return "unknown_buffer";
	case Errc::wrong_kind: return "wrong_kind";
	case Errc::too_large: return "too_large";
	case Errc::out_of_bounds: return "out_of_bounds";
	case Errc::unreachable: return "unreachable";
	case Errc::connection_lost: return "connection_lost";
	case Errc::timeout: return "timeout";
	case Errc::resources: return "resources";
	case Errc::protocol: return "protocol";
	case Errc::system: return "system";
	case Errc::closed: return "closed";
	case Errc::not_local: return "not_local";
	}
	return "unknown_error";
}

const char *errc_message(Errc code) noexcept
{
	switch (code) {
	case Errc::ok: return "success";
	case Errc::not_initialized: return "DPI context not initialized";
	case Errc::invalid_argument: return "invalid argument";
	case Errc::spec_error: return "bad cluster spec";
	case Errc::unknown_buffer: return "unknown buffer";
	case Errc::wrong_kind: return "operation does not apply to this kind of buffer";
	case Errc::too_large: return "append larger than a segment";
	case Errc::out_of_bounds: return "access outside the region";
	case Errc::unreachable: return "node unreachable";
	case Errc::connection_lost: return "connection lost";
	case Errc::timeout: return "timed out";
	case Errc::resources: return "out of resources";
	case Errc::protocol: return "protocol error";
	case Errc::system: return "system call failed";
	case Errc::closed: return "already closed";
	case Errc::not_local: return "buffer is not owned by this node";
	}
	return "unknown error code";
}

Error::Error(Errc code, const std::string &detail)
    : std::runtime_error(std::string(errc_message(code)) + ": " + detail), code_(code), detail_(detail)
{
}

namespace
{

[[noreturn]] void bad(std::string_view origin, size_t line, const std::string &why)
{
	throw Error(Errc::spec_error, std::string(origin) + ":" + std::to_string(line) + ": " + why);
}

bool parse_int(std::string_view s, long long lo, long long hi, long long &out)
{
	if (s.empty())
		return false;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
	return ec == std::errc() && p == s.data() + s.size() && out >= lo && out <= hi;
}

} // namespace

ClusterSpec ClusterSpec::parse(std::string_view text, std::string_view origin)
{
	ClusterSpec spec;
	std::set<int> ids;
	std::set<std::pair<std::string, uint16_t>> addrs;
	size_t dir_line = 0;
	std::istringstream in{std::string(text)};
	std::string raw;
	size_t lineno = 0;
	while (std::getline(in, raw)) {
		++lineno;
		if (auto hash = raw.find('#'); hash != std::string::npos)
			raw.erase(hash);
		std::istringstream ls(raw);
		std::vector<std::string> w;
		for (std::string tok; ls >> tok;)
			w.push_back(tok);
		if (w.empty())
			continue;
		if (w[0] == "node") {
			if (w.size() < 3)
				bad(origin, lineno, "expected 'node <id> <host>[:<port>] [device=<name>]'");
			long long id = 0;
			if (!parse_int(w[1], 0, 65535, id))
				bad(origin, lineno, "node id '" + w[1] + "' is not an integer in 0..65535");
			NodeAddress a;
			a.id = static_cast<int>(id);
			std::string hp = w[2];
			std::string port;
			if (!hp.empty() && hp[0] == '[') { // [v6]:port
				auto close = hp.find(']');
				if (close == std::string::npos)
					bad(origin, lineno, "unterminated '[' in address '" + hp + "'");
				a.host = hp.substr(1, close - 1);
				if (close + 1 < hp.size()) {
					if (hp[close + 1] != ':')
						bad(origin, lineno, "garbage after ']' in '" + hp + "'");
					port = hp.substr(close + 2);
					if (port.empty())
						bad(origin, lineno, "empty port in '" + hp + "'");
				}
			} else if (std::count(hp.begin(), hp.end(), ':') == 1) {
				auto colon = hp.find(':');
				a.host = hp.substr(0, colon);
				port = hp.substr(colon + 1);
				if (port.empty())
					bad(origin, lineno, "empty port in '" + hp + "'");
			} else {
				a.host = hp; // bare name, IPv4 or unbracketed IPv6
			}
			if (a.host.empty())
				bad(origin, lineno, "empty host in '" + hp + "'");
			if (!port.empty()) {
				long long p = 0;
				if (!parse_int(port, 1, 65535, p))
					bad(origin, lineno, "port '" + port + "' is not in 1..65535");
				a.port = static_cast<uint16_t>(p);
			}
			for (size_t i = 3; i < w.size(); ++i) {
				if (w[i].rfind("device=", 0) == 0 && w[i].size() > 7)
					a.device = w[i].substr(7);
				else
					bad(origin, lineno, "unknown node attribute '" + w[i] + "'");
			}
			if (!ids.insert(a.id).second)
				bad(origin, lineno, "duplicate node id " + std::to_string(a.id));
			if (!addrs.insert({a.host, a.port}).second)
				bad(origin, lineno,
				    "address " + a.host + ":" + std::to_string(a.port) + " is used twice");
			spec.nodes_.push_back(std::move(a));
		} else if (w[0] == "directory") {
			long long id = 0;
			if (w.size() != 2 || !parse_int(w[1], 0, 65535, id))
				bad(origin, lineno, "expected 'directory <node id>'");
			if (dir_line)
				bad(origin, lineno,
				    "second 'directory' line (first on line " + std::to_string(dir_line) + ")");
			spec.directory_ = static_cast<int>(id);
			dir_line = lineno;
		} else {
			bad(origin, lineno, "unknown keyword '" + w[0] + "' (expected 'node' or 'directory')");
		}
	}
	if (spec.nodes_.empty())
		throw Error(Errc::spec_error, std::string(origin) + ": no 'node' lines");
	if (dir_line) {
		if (!ids.contains(spec.directory_))
			bad(origin, dir_line,
			    "directory node " + std::to_string(spec.directory_) + " is not defined by a 'node' line");
	} else {
		spec.directory_ = *ids.begin();
	}
	return spec;
}

ClusterSpec ClusterSpec::load(const std::string &path)
{
	std::ifstream f(path);
	if (!f)
		throw Error(Errc::spec_error, "cannot open cluster spec '" + path + "': " + std::strerror(errno));
	std::stringstream ss;
	ss << f.rdbuf();
	return parse(ss.str(), path);
}

ClusterSpec ClusterSpec::from_env()
{
	const char *p = std::getenv("DPI_CLUSTER");
	if (!p || !*p)
		throw Error(Errc::spec_error, "DPI_CLUSTER is not set (it names the cluster spec file)");
	return load(p);
}

const NodeAddress *ClusterSpec::find(int id) const noexcept
{
	for (const auto &n : nodes_)
		if (n.id == id)
			return &n;
	return nullptr;
}

const NodeAddress &ClusterSpec::at(int id) const
{
	if (const auto *n = find(id))
		return *n;
	throw Error(Errc::invalid_argument, "node " + std::to_string(id) + " is not in the cluster spec");
}

} // namespace dpi
