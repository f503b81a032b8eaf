// Network probes between nodes (loom health probe --pairs; in lib/topo and
// its namespace: it walks the fabric model and needs nothing of lib/health,
// and every plugin that links lib/topo carries it): a plan of pairs
// that covers every node's link to its leaf and every leaf's uplinks with few
// pairs, a UDP echo measurement of loss and round-trip time between two
// nodes, and a verdict that locates the slow or lossy link by elimination.
//
// Plan: round 1 pairs the nodes of each leaf with each other (a leaf of an
// odd count pairs its last node with its first), round 2 pairs each leaf's
// nodes with the next leaf's (leaves in a ring), so every node is in two
// pairs with different partners and every leaf's uplink carries pairs to
// two other leaves (one where there are only two).
//
// Verdict: a pair is bad when it lost more than max_loss of its packets or
// its median round trip is over rtt_factor times the median of all pairs
// (and over rtt_floor_ms: a host busy enough to be slow to schedule the
// probe adds milliseconds of its own). The links a path uses are the two nodes' links to
// their leaves and, between leaves, each domain's uplink below the lowest
// domain that holds both. A link on a bad path and on no good one is named;
// when none or several remain the verdict says so and names no link.
#pragma once

#include "lib/topo/model.hpp"
#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::topo {

struct ProbePair {
	std::string client, server;
	int round = 1; // 1: within a leaf, 2: across leaves
};
expected<std::vector<ProbePair>> plan_pairs(const topo::Cluster &c, const std::vector<std::string> &hosts);

struct ProbeResult {
	std::string client, server;
	int sent = 0, received = 0;
	double rtt_median_ms = 0; // of the packets that came back
};
// "CLIENT SERVER SENT RECEIVED RTT_MS" lines ('#' comments); errors name the line.
expected<std::vector<ProbeResult>> parse_results(const std::string &text, const std::string &source);
std::string format_result(const ProbeResult &r);

struct ProbeLimits {
	double max_loss = 0.02;
	double rtt_factor = 3;
	double rtt_floor_ms = 5;
};
struct ProbeVerdict {
	std::vector<std::string> bad_pairs; // "n1 n3: lost 40 of 200" ...
	std::vector<std::string> suspects;  // links on bad paths and on no good one
	std::string link;                   // the one link named, "" when not one
	std::string why;                    // one line for people
};
ProbeVerdict judge(const topo::Cluster &c, const std::vector<ProbeResult> &results, const ProbeLimits &limits = {});

// The name of a node's link to its leaf, and of a domain's uplink.
std::string access_link(const topo::Cluster &c, topo::Index node);
std::string uplink(const topo::Cluster &c, topo::Index domain);

// UDP echo (the server sends every datagram back as it came).
// serve: until 'for_s' seconds have passed; never blocks past that.
status serve_echo(const std::string &bind_addr, int port, double for_s);
// measure: 'count' datagrams of 'payload' bytes, one every 'gap_ms', then
// waits up to timeout_ms for the last replies. Never blocks past that.
expected<ProbeResult> measure_echo(const std::string &addr, int port, int count, int payload, double gap_ms,
				   int timeout_ms);

} // namespace loom::topo
