// Unit tests for the placement engine's text forms: requests, weights and
// state files, and that a dumped decision replays to the same answer.
#include "tests/unit/check_main.hpp"
#include "tests/unit/place_fixture.hpp"

#include "lib/place/engine.hpp"
#include "lib/place/explain.hpp"
#include "lib/place/state_file.hpp"
#include "lib/place/synthetic.hpp"
#include "lib/topo/build.hpp"
#include "lib/topo/cluster_json.hpp"

#include <string>

using namespace loom;
using namespace loom::place;

namespace {

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

} // namespace

START_TEST(request_round_trip)
{
	auto r = parse_request("nodes=2-4 gpus_per_node=8 cores_per_node=16 exclusive=yes class=h100 faster=yes "
			       "comm=heavy locality=pod:strict switches=2 exclude=n[1-3],n7");
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->min_nodes, 2);
	ck_assert_int_eq(r->max_nodes, 4);
	ck_assert_int_eq(r->gpus_per_node, 8);
	ck_assert(r->whole_node && r->allow_faster_class);
	ck_assert(r->comm == Comm::heavy && r->locality == Locality::strict);
	ck_assert_sstr_eq(r->locality_level, "pod");
	ck_assert_int_eq(r->exclude.size(), 4);
	auto again = parse_request(format_request(*r));
	ck_assert(again.has_value());
	ck_assert_sstr_eq(format_request(*again), format_request(*r));
	ck_assert_sstr_eq(format_request(Request{}), "nodes=1");
}
END_TEST

START_TEST(request_refused_with_reason)
{
	auto r = parse_request("nodes=4 gpu_per_node=8", "job 42");
	ck_assert(!r.has_value());
	ck_assert_msg(has(r.error().str(), "job 42") && has(r.error().str(), "gpu_per_node"), "%s",
		      r.error().str().c_str());
	ck_assert(!parse_request("nodes=0").has_value());
	auto backwards = parse_request("nodes=4-2");
	ck_assert(!backwards.has_value());
	std::string why = backwards.error().str(); // says what is wrong, not a bound from the other end
	ck_assert_msg(why.find("4-2") != std::string::npos &&
			      why.find("maximum is below the minimum") != std::string::npos,
		      "nodes=4-2: %s", why.c_str());
	ck_assert(!parse_request("comm=loud").has_value());
	ck_assert(!parse_request("gpus=8 gpus_per_node=8").has_value());
	ck_assert(!parse_request("within=leaf prefer=pod").has_value());
	ck_assert(!parse_request("nodes=2 nodes=3").has_value());
	ck_assert(!parse_request("exclude=n[1-").has_value());
}
END_TEST

START_TEST(weights_fail_closed)
{
	auto w = parse_weights("leaf=5 suspect=200 class_order=a100,h100", "SelectTypeParameters");
	ck_assert_msg(w.has_value(), "%s", w ? "" : w.error().str().c_str());
	ck_assert(w->leaf == 5 && w->suspect == 200 && w->level == Weights{}.level);
	ck_assert_int_eq(w->class_order.size(), 2);
	auto bad = parse_weights("leaf=-1", "x");
	ck_assert(!bad.has_value());
	bad = parse_weights("leafs=1", "SelectTypeParameters");
	ck_assert(!bad.has_value());
	ck_assert(has(bad.error().str(), "leafs"));
	// The documented sample file holds the defaults.
	auto file = load_weights_file(test::srcdir() + "/etc/place/weights.conf");
	ck_assert_msg(file.has_value(), "%s", file ? "" : file.error().str().c_str());
	ck_assert_sstr_eq(format_weights(*file), format_weights(Weights{}));
}
END_TEST

START_TEST(state_round_trip_and_replay)
{
	auto c = test_cluster();
	State s(c);
	ck_assert(s.allocate(c.find_node("n1"), 3, 10).has_value());
	ck_assert(s.allocate(c.find_node("n6"), 8, 64).has_value());
	ck_assert(s.set_health(c.find_node("n10"), 0.25, true).has_value());
	ck_assert(s.set_available(c.find_node("n12"), false).has_value());
	ck_assert(s.set_capacity(c.find_node("n16"), 4, 32).has_value());
	std::string text = write_state(s);
	auto back = read_state(c, text, "dump");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert_sstr_eq(write_state(*back), text);
	for (Index d = 0; d < static_cast<Index>(c.domains.size()); d++) {
		ck_assert_int_eq(back->domain(d).free_gpus, s.domain(d).free_gpus);
		ck_assert_int_eq(back->domain(d).idle, s.domain(d).idle);
	}
	// Same state and request: the same answer.
	Request r = *parse_request("nodes=3 gpus_per_node=8 comm=heavy");
	auto a = loom::place::place(s, r, nullptr, Weights{}, 2),
	     b = loom::place::place(*back, *parse_request(format_request(r)), nullptr, Weights{}, 2);
	ck_assert(a.has_value() && b.has_value() && a->placed());
	ck_assert(a->candidates[0].nodes == b->candidates[0].nodes);
	ck_assert(a->candidates[1].nodes == b->candidates[1].nodes);
}
END_TEST

START_TEST(state_file_errors_name_line)
{
	auto c = test_cluster();
	auto s = read_state(c, "# comment\nn[1-4] used_gpus=8\n\nn99 used_gpus=1\n", "st");
	ck_assert(!s.has_value());
	ck_assert_msg(has(s.error().str(), "st:4") && has(s.error().str(), "n99"), "%s", s.error().str().c_str());
	ck_assert(!read_state(c, "n1 used_gpus=9\n", "st").has_value());
	ck_assert(!read_state(c, "n1 health=2\n", "st").has_value());
	ck_assert(!read_state(c, "n1 gpus_used=1\n", "st").has_value());
	auto ok = read_state(c, "n[1-4] used_gpus=8 used_cores=64 # busy\nn5 down=yes\n", "st");
	ck_assert(ok.has_value());
	ck_assert_int_eq(ok->domain(c.find_domain("leaf1")).free_gpus, 0);
	ck_assert_int_eq(ok->total().nodes, 15);
}
END_TEST

START_TEST(explain_files_from_tests_data)
{
	// What `loom place --explain --cluster ... --state ...` reads.
	auto c = topo::load_cluster_file(test::data("place/test-cluster.json"));
	ck_assert_msg(c.has_value(), "%s", c ? "" : c.error().str().c_str());
	auto s = load_state_file(*c, test::data("place/small-jobs.state"));
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	auto d = loom::place::place(*s, *parse_request("gpus_per_node=2"), nullptr, Weights{}, 2);
	ck_assert(d.has_value() && d->placed());
	ck_assert_sstr_eq(c->nodes[d->candidates[0].nodes[0]].name, "n2"); // the fullest node that fits
	d = loom::place::place(*s, *parse_request("nodes=4 gpus_per_node=8 comm=heavy"), nullptr, Weights{}, 2);
	ck_assert(d.has_value() && d->placed());
	for (Index n : d->candidates[0].nodes) // leaf2: whole, healthy
		ck_assert(c->nodes[n].leaf == c->find_domain("leaf2"));
	std::string text = format_decision(*c, *parse_request("nodes=4 gpus_per_node=8"), *d);
	ck_assert(has(text, "chosen:    n[5-8]") && has(text, "runner-up:"));
	ck_assert(has(decision_json(*c, Request{}, *d), "\"placed\": true"));
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("place_io");
	TCase *tc = tcase_create("text");
	tcase_add_test(tc, request_round_trip);
	tcase_add_test(tc, request_refused_with_reason);
	tcase_add_test(tc, weights_fail_closed);
	tcase_add_test(tc, state_round_trip_and_replay);
	tcase_add_test(tc, state_file_errors_name_line);
	tcase_add_test(tc, explain_files_from_tests_data);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
