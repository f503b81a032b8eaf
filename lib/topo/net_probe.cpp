#include "lib/topo/net_probe.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <netdb.h>
#include <poll.h>
#include <set>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace loom::topo {

namespace {

int64_t now_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

struct Fd {
	int fd = -1;
	~Fd()
	{
		if (fd >= 0)
			::close(fd);
	}
};

expected<addrinfo *> resolve(const std::string &addr, int port, bool passive)
{
	addrinfo hints{};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	addrinfo *res = nullptr;
	std::string p = std::to_string(port);
	int rc = ::getaddrinfo(addr.empty() ? nullptr : addr.c_str(), p.c_str(), &hints, &res);
	if (rc != 0 || !res)
		return unexpected("'" + addr + "' port " + p + ": " + ::gai_strerror(rc));
	return res;
}

constexpr uint32_t k_magic = 0x6c6f6f6d; // "loom"

struct Header {
	uint32_t magic;
	uint32_t seq;
	int64_t sent_ns;
};

// Room for a whole probe's datagrams, so that a process the scheduler keeps
// off the CPU for a while loses none of them to its own socket buffer (as
// root past net.core.rmem_max, else up to it).
void big_buffers(int fd)
{
	int want = 8 << 20;
	if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) != 0)
		(void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
	if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof(want)) != 0)
		(void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
}

double median(std::vector<double> v)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	size_t m = v.size() / 2;
	return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

} // namespace

std::string access_link(const topo::Cluster &c, topo::Index node)
{
	const topo::Node &n = c.nodes[node];
	return n.name + " - " + (n.leaf == topo::none ? std::string("(no leaf)") : c.domains[n.leaf].name);
}

std::string uplink(const topo::Cluster &c, topo::Index domain)
{
	const topo::Domain &d = c.domains[domain];
	return d.name + " - " + (d.parent == topo::none ? std::string("(top)") : c.domains[d.parent].name);
}

expected<std::vector<ProbePair>> plan_pairs(const topo::Cluster &c, const std::vector<std::string> &hosts)
{
	// Leaves in order of first appearance, their hosts in the order given.
	std::vector<topo::Index> leaves;
	std::map<topo::Index, std::vector<std::string>> of;
	std::set<std::string> seen;
	for (const std::string &h : hosts) {
		if (!seen.insert(h).second)
			return unexpected("host '" + h + "' is named twice");
		topo::Index n = c.find_node(h);
		if (n == topo::none)
			return unexpected("host '" + h + "' is not in the fabric");
		topo::Index l = c.nodes[n].leaf;
		if (!of.count(l))
			leaves.push_back(l);
		of[l].push_back(h);
	}
	if (hosts.size() < 2)
		return unexpected("a probe needs two hosts or more");
	std::vector<ProbePair> out;
	for (topo::Index l : leaves) {
		const auto &v = of[l];
		for (size_t i = 0; i + 1 < v.size(); i += 2)
			out.push_back({v[i], v[i + 1], 1});
		if (v.size() % 2 == 1 && v.size() > 1)
			out.push_back({v.back(), v.front(), 1});
	}
	if (leaves.size() >= 2) {
		size_t rounds = leaves.size() == 2 ? 1 : leaves.size();
		for (size_t k = 0; k < rounds; k++) {
			const auto &a = of[leaves[k]], &b = of[leaves[(k + 1) % leaves.size()]];
			size_t n = std::max(a.size(), b.size());
			for (size_t i = 0; i < n; i++)
				out.push_back({a[i % a.size()], b[i % b.size()], 2});
		}
	}
	return out;
}

std::string format_result(const ProbeResult &r)
{
	char rtt[32];
	std::snprintf(rtt, sizeof(rtt), "%.3f", r.rtt_median_ms);
	return r.client + " " + r.server + " " + std::to_string(r.sent) + " " + std::to_string(r.received) + " " + rtt;
}

expected<std::vector<ProbeResult>> parse_results(const std::string &text, const std::string &source)
{
	std::vector<ProbeResult> out;
	std::istringstream in(text);
	std::string line;
	for (int no = 1; std::getline(in, line); no++) {
		size_t hash = line.find('#');
		if (hash != std::string::npos)
			line.resize(hash);
		std::istringstream w(line);
		ProbeResult r;
		std::string extra;
		if (!(w >> r.client))
			continue;
		if (!(w >> r.server >> r.sent >> r.received >> r.rtt_median_ms) || (w >> extra) || r.sent <= 0 ||
		    r.received < 0 || r.received > r.sent || !(r.rtt_median_ms >= 0) || !std::isfinite(r.rtt_median_ms))
			return unexpected(
				source + ":" + std::to_string(no) +
				": expected 'CLIENT SERVER SENT RECEIVED RTT_MS' (received at most sent), got '" +
				line + "'");
		out.push_back(std::move(r));
	}
	return out;
}

ProbeVerdict judge(const topo::Cluster &c, const std::vector<ProbeResult> &results, const ProbeLimits &limits)
{
	ProbeVerdict v;
	std::vector<double> rtts;
	for (const auto &r : results)
		if (r.received > 0)
			rtts.push_back(r.rtt_median_ms);
	double typical = median(rtts);
	std::set<std::string> on_bad, on_good;
	auto links = [&](topo::Index a, topo::Index b) {
		std::vector<std::string> l = {access_link(c, a), access_link(c, b)};
		topo::Index common = c.common_domain(a, b);
		for (topo::Index n : {a, b})
			for (topo::Index d = c.nodes[n].leaf; d != topo::none && d != common; d = c.domains[d].parent)
				l.push_back(uplink(c, d));
		return l;
	};
	for (const auto &r : results) {
		topo::Index a = c.find_node(r.client), b = c.find_node(r.server);
		if (a == topo::none || b == topo::none) {
			v.bad_pairs.push_back(r.client + " " + r.server + ": not in the fabric");
			continue;
		}
		double loss = 1.0 - static_cast<double>(r.received) / r.sent;
		bool slow = r.received > 0 && r.rtt_median_ms > limits.rtt_floor_ms &&
			    r.rtt_median_ms > limits.rtt_factor * typical;
		bool bad = loss > limits.max_loss || slow;
		if (bad) {
			char why[160];
			if (loss > limits.max_loss)
				std::snprintf(why, sizeof(why), "lost %d of %d", r.sent - r.received, r.sent);
			else
				std::snprintf(why, sizeof(why), "round trip %.2f ms, %.1fx the pairs' median %.2f ms",
					      r.rtt_median_ms, r.rtt_median_ms / typical, typical);
			v.bad_pairs.push_back(r.client + " " + r.server + ": " + why);
		}
		for (const std::string &l : links(a, b))
			(bad ? on_bad : on_good).insert(l);
	}
	for (const std::string &l : on_bad)
		if (!on_good.count(l))
			v.suspects.push_back(l);
	if (v.bad_pairs.empty()) {
		v.why = "clean: " + std::to_string(results.size()) + " pairs within limits";
	} else if (v.suspects.size() == 1) {
		v.link = v.suspects[0];
		v.why = "bad link: " + v.link + " (on every bad pair's path and on no good one)";
	} else if (v.suspects.empty()) {
		v.why = "inconclusive: every link of the bad pairs also carried a good one (more than one fault, "
			"or a fault of the host itself)";
	} else {
		std::string s;
		for (const std::string &l : v.suspects)
			s += (s.empty() ? "" : ", ") + l;
		v.why = "one of " + std::to_string(v.suspects.size()) + " links: " + s +
			" (the pairs cannot tell them apart; probe more pairs)";
	}
	return v;
}

status serve_echo(const std::string &bind_addr, int port, double for_s)
{
	auto ai = resolve(bind_addr, port, true);
	if (!ai)
		return unexpected(ai.error());
	Fd s;
	s.fd = ::socket((*ai)->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (s.fd >= 0) {
		(void)::setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		big_buffers(s.fd);
	}
	if (s.fd < 0 || ::bind(s.fd, (*ai)->ai_addr, (*ai)->ai_addrlen) != 0) {
		int e = errno;
		::freeaddrinfo(*ai);
		return unexpected("cannot listen on " + (bind_addr.empty() ? std::string("*") : bind_addr) + " port " +
				  std::to_string(port) + ": " + std::strerror(e));
	}
	::freeaddrinfo(*ai);
	int64_t end = now_ns() + static_cast<int64_t>(for_s * 1e9);
	char buf[65536];
	for (int64_t t; (t = now_ns()) < end;) {
		pollfd p{s.fd, POLLIN, 0};
		int left = static_cast<int>(std::min<int64_t>((end - t) / 1000000 + 1, 1000));
		int rc = ::poll(&p, 1, left);
		if (rc < 0 && errno != EINTR)
			return unexpected(std::string("poll: ") + std::strerror(errno));
		if (rc <= 0)
			continue;
		sockaddr_storage from{};
		socklen_t len = sizeof(from);
		ssize_t n = ::recvfrom(s.fd, buf, sizeof(buf), MSG_DONTWAIT, reinterpret_cast<sockaddr *>(&from), &len);
		if (n > 0)
			(void)::sendto(s.fd, buf, static_cast<size_t>(n), MSG_DONTWAIT,
				       reinterpret_cast<sockaddr *>(&from), len);
	}
	return {};
}

expected<ProbeResult> measure_echo(const std::string &addr, int port, int count, int payload, double gap_ms,
				   int timeout_ms)
{
	if (count < 1 || payload < static_cast<int>(sizeof(Header)) || payload > 65000)
		return unexpected("count must be 1 or more and the payload " + std::to_string(sizeof(Header)) +
				  " to 65000 bytes");
	auto ai = resolve(addr, port, false);
	if (!ai)
		return unexpected(ai.error());
	Fd s;
	s.fd = ::socket((*ai)->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s.fd < 0 || ::connect(s.fd, (*ai)->ai_addr, (*ai)->ai_addrlen) != 0) {
		int e = errno;
		::freeaddrinfo(*ai);
		return unexpected("cannot reach " + addr + " port " + std::to_string(port) + ": " + std::strerror(e));
	}
	::freeaddrinfo(*ai);
	big_buffers(s.fd);
	std::vector<char> out(static_cast<size_t>(payload), 0), in(65536);
	std::vector<double> rtt(static_cast<size_t>(count), -1);
	ProbeResult r;
	r.server = addr;
	auto drain = [&](int wait_ms) {
		pollfd p{s.fd, POLLIN, 0};
		if (::poll(&p, 1, wait_ms) <= 0)
			return false;
		bool any = false;
		for (;;) {
			ssize_t n = ::recv(s.fd, in.data(), in.size(), MSG_DONTWAIT);
			if (n < 0)
				break; // EAGAIN, or ECONNREFUSED: counted as lost
			Header h{};
			if (static_cast<size_t>(n) < sizeof(h))
				continue;
			std::memcpy(&h, in.data(), sizeof(h));
			if (h.magic != k_magic || h.seq >= static_cast<uint32_t>(count) || rtt[h.seq] >= 0)
				continue;
			rtt[h.seq] = static_cast<double>(now_ns() - h.sent_ns) / 1e6;
			any = true;
		}
		return any;
	};
	int64_t next = now_ns();
	for (int i = 0; i < count; i++) {
		Header h{k_magic, static_cast<uint32_t>(i), now_ns()};
		std::memcpy(out.data(), &h, sizeof(h));
		(void)::send(s.fd, out.data(), out.size(), 0); // one the kernel refuses is lost too
		r.sent++;
		next += static_cast<int64_t>(gap_ms * 1e6);
		for (int64_t t; (t = now_ns()) < next;)
			(void)drain(static_cast<int>((next - t) / 1000000));
	}
	int64_t end = now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
	for (int64_t t; (t = now_ns()) < end;) {
		if (std::count_if(rtt.begin(), rtt.end(), [](double x) { return x >= 0; }) == count)
			break;
		(void)drain(static_cast<int>((end - t) / 1000000 + 1));
	}
	std::vector<double> got;
	for (double x : rtt)
		if (x >= 0)
			got.push_back(x);
	r.received = static_cast<int>(got.size());
	r.rtt_median_ms = median(got);
	return r;
}

} // namespace loom::topo
