// Unit tests for what lib/place decides about a job before and after the
// engine: the hint words (one spelling for sbatch, the request text and
// --explain), the job's GPU class, the submit checks and waits of a strict
// locality, the suspect nodes' health cap and required nodes.
//
// The cluster: 16 nodes x 8 GPUs, 4 leaves of 4, 2 pods, one spine; n1-n8
// a100, n9-n16 h100.
#include "tests/unit/check_main.hpp"
#include "tests/unit/place_fixture.hpp"

#include "lib/place/admit.hpp"
#include "lib/place/engine.hpp"
#include "lib/place/explain.hpp"
#include "lib/place/gpu_class.hpp"
#include "lib/place/hints.hpp"
#include "lib/place/slurm_policy.hpp"
#include "lib/place/synthetic.hpp"
#include "lib/topo/build.hpp"
#include "lib/util/fs.hpp"

#include <string>
#include <vector>

using namespace loom;
using namespace loom::place;

namespace {

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

Request req(const std::string &text)
{
	auto r = parse_request(text);
	ck_assert_msg(r.has_value(), "%s: %s", text.c_str(), r ? "" : r.error().str().c_str());
	return *r;
}

Index node(const topo::Cluster &c, const std::string &name) { return c.find_node(name); }

// One busy node in every leaf (n1, n5, n9, n13): no leaf has 4 free nodes.
State one_busy_per_leaf(const topo::Cluster &c)
{
	State s(c);
	for (const char *n : {"n1", "n5", "n9", "n13"})
		ck_assert(s.allocate(node(c, n), 8, 0).has_value());
	return s;
}

} // namespace

START_TEST(comm_words_round_trip)
{
	for (Comm c : {Comm::light, Comm::normal, Comm::heavy}) {
		auto back = parse_comm(comm_name(c));
		ck_assert(back.has_value() && *back == c);
	}
	ck_assert_sstr_eq(comm_words, "heavy|normal|light");
	auto bad = parse_comm("loud");
	ck_assert(!bad.has_value());
	ck_assert_sstr_eq(bad.error().str(), "bad value 'loud': expected heavy, normal or light");
	ck_assert(!parse_comm("").has_value());
	ck_assert(!parse_comm("Heavy").has_value());
}
END_TEST

START_TEST(locality_words_round_trip)
{
	auto h = parse_locality("leaf:strict");
	ck_assert(h.has_value() && h->mode == Locality::strict);
	ck_assert_sstr_eq(h->kind, "leaf");
	ck_assert_sstr_eq(format_locality(*h), "leaf:strict");
	// No mode given: prefer, and printed with its mode.
	h = parse_locality("pod");
	ck_assert(h.has_value() && h->mode == Locality::prefer);
	ck_assert_sstr_eq(format_locality(*h), "pod:prefer");
	for (const char *text : {"leaf:strict", "pod:prefer", "nvlink:strict", "0:strict", "level-4:prefer"}) {
		auto x = parse_locality(text);
		ck_assert_msg(x.has_value(), "%s", text);
		ck_assert_sstr_eq(format_locality(*x), text);
	}
	ck_assert_sstr_eq(format_locality(LocalityHint{}), "");
	ck_assert_sstr_eq(locality_words, "KIND[:strict|:prefer]");
}
END_TEST

START_TEST(locality_errors_name_the_value_and_the_words)
{
	auto e = parse_locality("leaf:sometimes");
	ck_assert(!e.has_value());
	ck_assert_sstr_eq(e.error().str(), "bad value 'leaf:sometimes': expected KIND, KIND:strict or KIND:prefer");
	e = parse_locality("leaf;rm");
	ck_assert(!e.has_value());
	ck_assert_msg(has(e.error().str(), "'leaf;rm'") && has(e.error().str(), "letters, digits, '-' or '_'"), "%s",
		      e.error().str().c_str());
	for (const std::string &text :
	     {std::string(), std::string(":strict"), std::string("leaf:"), std::string(65, 'a')})
		ck_assert_msg(!parse_locality(text).has_value(), "'%s' accepted", text.c_str());
}
END_TEST

START_TEST(request_writes_one_spelling_reads_the_old_one)
{
	ck_assert_sstr_eq(format_request(req("nodes=4 locality=leaf:strict")), "nodes=4 locality=leaf:strict");
	ck_assert_sstr_eq(format_request(req("nodes=4 locality=pod")), "nodes=4 locality=pod:prefer");
	ck_assert_sstr_eq(format_request(req("nodes=4 comm=heavy locality=nvlink:prefer")),
			  "nodes=4 comm=heavy locality=nvlink:prefer");
	// Request files kept before the one spelling still read, and are
	// written back in it.
	Request old = req("nodes=4 within=leaf");
	ck_assert(old.locality == Locality::strict);
	ck_assert_sstr_eq(old.locality_level, "leaf");
	ck_assert_sstr_eq(format_request(old), "nodes=4 locality=leaf:strict");
	ck_assert_sstr_eq(format_request(req("nodes=2 prefer=pod")), "nodes=2 locality=pod:prefer");
	// One locality, whatever the spelling; old keys take no mode.
	ck_assert(!parse_request("locality=leaf:strict within=pod").has_value());
	ck_assert(!parse_request("within=leaf:strict").has_value());
	auto bad = parse_request("nodes=2 comm=loud", "--request");
	ck_assert(!bad.has_value());
	ck_assert_sstr_eq(bad.error().str(),
			  "--request: key 'comm': bad value 'loud': expected heavy, normal or light");
	bad = parse_request("locality=leaf:often", "--request");
	ck_assert(!bad.has_value());
	ck_assert_msg(has(bad.error().str(), "bad value 'leaf:often': expected KIND, KIND:strict or KIND:prefer"), "%s",
		      bad.error().str().c_str());
}
END_TEST

START_TEST(explain_prints_the_sbatch_spelling)
{
	auto c = test_cluster();
	State s(c);
	Request r = req("nodes=4 gpus_per_node=8 comm=heavy locality=leaf:strict");
	auto d = place::place(s, r, nullptr, Weights{}, 1);
	ck_assert(d.has_value() && d->placed());
	std::string text = format_decision(c, r, *d);
	ck_assert_msg(has(text, "request:   nodes=4 gpus_per_node=8 comm=heavy locality=leaf:strict\n"), "%s",
		      text.c_str());
	ck_assert(!has(text, "within="));
	ck_assert(has(decision_json(c, r, *d), "locality=leaf:strict"));
	// An engine error names the hint by its key.
	auto e = place::place(s, req("nodes=2 locality=rack:strict"), nullptr, Weights{});
	ck_assert(!e.has_value());
	ck_assert_msg(has(e.error().str(), "locality") && has(e.error().str(), "'rack'"), "%s",
		      e.error().str().c_str());
}
END_TEST

START_TEST(strict_leaf_job_waits_and_says_why)
{
	auto c = test_cluster();
	State s = one_busy_per_leaf(c);
	Request strict = req("nodes=4 gpus_per_node=8 locality=leaf:strict");
	auto d = place::place(s, strict, nullptr, Weights{});
	ck_assert(d.has_value() && !d->placed());
	NoFit f = when_unplaced(strict, d->reason);
	ck_assert(f.then == Unplaced::wait);
	ck_assert_msg(has(f.reason, "waiting (strict locality=leaf:strict)") && has(f.reason, "'leaf'") &&
			      has(f.reason, "none has room"),
		      "%s", f.reason.c_str());
	// The same job as a wish is placed across leaves; with no room at all
	// it is left to cons_tres, never made to wait.
	Request prefer = req("nodes=4 gpus_per_node=8 locality=leaf:prefer");
	auto p = place::place(s, prefer, nullptr, Weights{});
	ck_assert(p.has_value() && p->placed());
	ck_assert(when_unplaced(prefer, "no room").then == Unplaced::cons_tres);
	ck_assert(when_unplaced(req("nodes=4"), "no room").then == Unplaced::cons_tres);
	// cons_tres refused every candidate: a strict job still waits.
	f = when_unplaced(strict, "", 3);
	ck_assert(f.then == Unplaced::wait);
	ck_assert_sstr_eq(f.reason, "cons_tres refused all 3 candidates; waiting (strict locality)");
	ck_assert_sstr_eq(when_unplaced(prefer, "", 2).reason,
			  "cons_tres refused all 2 candidates; placed by cons_tres");
}
END_TEST

START_TEST(submit_refuses_unknown_kinds_and_strict_jobs_that_can_never_fit)
{
	auto c = test_cluster();
	auto kinds = topo::locality_kinds(c);
	ck_assert(check_locality_kind(LocalityHint{}, kinds).has_value());
	ck_assert(check_locality_kind(*parse_locality("pod:strict"), kinds).has_value());
	status st = check_locality_kind(*parse_locality("galaxy"), kinds);
	ck_assert(!st.has_value());
	ck_assert_sstr_eq(st.error().str(), "--locality=galaxy: this cluster has no domain of that kind (kinds: " +
						    join(kinds, ", ") + ")");
	// Every node offered: a leaf holds 4, a pod 8, the spine 16.
	Allowed all(c.nodes.size(), true);
	ck_assert(can_ever_fit(c, "leaf", all, 4));
	ck_assert(!can_ever_fit(c, "leaf", all, 5));
	ck_assert(can_ever_fit(c, "pod", all, 8));
	ck_assert(!can_ever_fit(c, "pod", all, 9));
	// Busy nodes do not matter (they end); nodes not offered do.
	Allowed some(c.nodes.size());
	for (const char *n : {"n1", "n2", "n3", "n5", "n6", "n7"})
		some.set(node(c, n));
	ck_assert(!can_ever_fit(c, "leaf", some, 4));
	ck_assert(can_ever_fit(c, "leaf", some, 3));
	ck_assert(can_ever_fit(c, "pod", some, 6));
	// No NVLink domains, no such kind: never.
	ck_assert(!can_ever_fit(c, topo::nvlink_kind, all, 1));
	ck_assert(!can_ever_fit(c, "galaxy", all, 1));
}
END_TEST

START_TEST(suspect_node_health_is_capped)
{
	ck_assert(node_health(1.0, true) == suspect_health_cap);
	ck_assert(suspect_health_cap == 0.5);
	ck_assert(node_health(0.3, true) == 0.3); // a worse history stays worse
	ck_assert(node_health(0.9, false) == 0.9);
	ck_assert(node_health(1.0, false) == 1.0);
	auto c = test_cluster();
	State s(c);
	Index n9 = node(c, "n9");
	ck_assert(update_health(s, n9, 1.0, true));
	ck_assert(s.suspect(n9) && s.health(n9) == 0.5);
	ck_assert(!update_health(s, n9, 1.0, true)); // unchanged: nothing to do
	ck_assert(update_health(s, n9, 1.0, false));
	ck_assert(!s.suspect(n9) && s.health(n9) == 1.0);
	// A suspect node is placed last: an h100 gang that fits elsewhere avoids it.
	ck_assert(update_health(s, n9, 1.0, true));
	auto d = place::place(s, req("nodes=4 gpus_per_node=8 class=h100"), nullptr, Weights{});
	ck_assert(d.has_value() && d->placed());
	ck_assert_int_eq(d->candidates[0].score.suspect_nodes, 0);
}
END_TEST

START_TEST(job_gpu_class_from_constraint_then_gres)
{
	std::vector<std::string> classes = {"a100", "h100"};
	ck_assert_sstr_eq(job_gpu_class("h100", "", classes), "h100");
	ck_assert_sstr_eq(job_gpu_class("ib&h100", "", classes), "h100");
	ck_assert_sstr_eq(job_gpu_class("[a100|h100]", "", classes), "a100");
	ck_assert_sstr_eq(job_gpu_class("h1000", "", classes), "");
	// No class in --constraint: the GRES type, when the nodes have that class.
	ck_assert_sstr_eq(job_gpu_class("", "gres/gpu:h100:8", classes), "h100");
	ck_assert_sstr_eq(job_gpu_class("ib", "gres:gpu:a100:8", classes), "a100");
	ck_assert_sstr_eq(job_gpu_class("", "gres/gpu:l40s:8", classes), "");
	ck_assert_sstr_eq(job_gpu_class("", "gres/gpu:8", classes), "");
	ck_assert_sstr_eq(job_gpu_class("a100", "gres/gpu:h100:8", classes), "a100"); // --constraint first
	ck_assert_sstr_eq(job_gpu_class("h100", "gres/gpu:h100:8", {}), "");          // no classes: any
	// --gres=gpu:h100:8 lands on h100 nodes (n9-n16) while a100 ones are free.
	auto c = test_cluster();
	State s(c);
	Request r = req("nodes=2 gpus_per_node=8");
	r.gpu_class = job_gpu_class("", "gres/gpu:h100:8", classes);
	auto d = place::place(s, r, nullptr, Weights{});
	ck_assert(d.has_value() && d->placed());
	for (Index n : d->candidates[0].nodes)
		ck_assert_msg(c.classes.name(c.nodes[n].perf_class) == "h100", "%s", c.nodes[n].name.c_str());
}
END_TEST

START_TEST(required_nodes_leave_nothing_to_choose)
{
	SlurmPolicies p;
	note_required(p, 2, 2, 0, false); // -w n[3-4] -N2
	ck_assert(p.required_all && !p.required_gpus);
	note_required(p, 2, 4, 2, false); // -w n[3-4] with Slurm aiming for 2
	ck_assert(p.required_all);
	note_required(p, 1, 4, 4, false); // -w n3 -N4: three left to choose
	ck_assert(!p.required_all);
	note_required(p, 1, 4, 0, true); // -w n3 --gpus=16
	ck_assert(!p.required_all && p.required_gpus);
	note_required(p, 0, 4, 0, true); // no -w
	ck_assert(!p.required_all && !p.required_gpus);
	ck_assert(step_aside_for(p).empty());
	note_required(p, 2, 2, 0, false);
	ck_assert(!step_aside_for(p).empty()); // cons_tres takes the named nodes
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("place_hints");
	TCase *tc = tcase_create("hints");
	tcase_add_test(tc, comm_words_round_trip);
	tcase_add_test(tc, locality_words_round_trip);
	tcase_add_test(tc, locality_errors_name_the_value_and_the_words);
	tcase_add_test(tc, request_writes_one_spelling_reads_the_old_one);
	tcase_add_test(tc, explain_prints_the_sbatch_spelling);
	suite_add_tcase(s, tc);
	tc = tcase_create("decisions");
	tcase_add_test(tc, strict_leaf_job_waits_and_says_why);
	tcase_add_test(tc, submit_refuses_unknown_kinds_and_strict_jobs_that_can_never_fit);
	tcase_add_test(tc, suspect_node_health_is_capped);
	tcase_add_test(tc, job_gpu_class_from_constraint_then_gres);
	tcase_add_test(tc, required_nodes_leave_nothing_to_choose);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
