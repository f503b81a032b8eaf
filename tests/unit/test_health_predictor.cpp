// Unit tests for the predictor: the trend fit, the history file, and replays
// of the sequences in tests/health (see make_sequences.py there): every
// failing sequence must warn before its value reaches the threshold, and no
// healthy sequence may warn at all. Lead times are printed for the record.
#include "lib/health/predictor.hpp"
#include "lib/util/fs.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::health;

namespace {

struct Sequence {
	std::string metric;
	double threshold = 0;
	int64_t fails_at = -1;
	std::vector<std::pair<int64_t, double>> points;
};

Sequence load(const std::string &name)
{
	std::string path = test::srcdir() + "/tests/health/seq-" + name + ".tsv";
	auto text = read_file(path);
	ck_assert_msg(text.has_value(), "%s", text ? "" : text.error().str().c_str());
	Sequence s;
	for (const auto &line : split_lines(*text)) {
		if (line.rfind("# metric: ", 0) == 0)
			s.metric = line.substr(10);
		else if (line.rfind("# threshold: ", 0) == 0)
			s.threshold = std::atof(line.c_str() + 13);
		else if (line.rfind("# fails_at: ", 0) == 0)
			s.fails_at = line.substr(12) == "none" ? -1 : std::atoll(line.c_str() + 12);
		else if (!line.empty() && line[0] != '#') {
			size_t tab = line.find('\t');
			ck_assert(tab != std::string::npos);
			s.points.emplace_back(std::atoll(line.c_str()), std::atof(line.c_str() + tab + 1));
		}
	}
	ck_assert(!s.metric.empty() && s.threshold > 0 && !s.points.empty());
	return s;
}

ReplayResult replay(const Sequence &s)
{
	// The defaults: history_len=12, predict_horizon=30 min.
	return replay_series(s.metric, s.points, s.threshold, 12, 1800);
}

} // namespace

START_TEST(trend_fit)
{
	std::vector<HistoryPoint> h;
	for (int i = 0; i < 6; i++)
		h.push_back({i * 60, {{"gpu0.temp", 70.0 + i}}}); // +1 C/min, now 75 C
	auto t = predict(h, {{"gpu0.temp", 75, 84}}, 1800);
	ck_assert_int_eq(t.size(), 1);
	ck_assert(t[0].slope_per_s > 0.0166 && t[0].slope_per_s < 0.0167); // 1 C per 60 s
	ck_assert(t[0].eta_s > 539 && t[0].eta_s < 541);                   // 9 C at 1 C/min
	ck_assert_sstr_eq(trend_evidence(t[0]), "gpu0.temp at 75 rising 1/min: reaches 84 in about 9 min");
	// Too far ahead for a 5-minute horizon; too few points; already over.
	ck_assert(predict(h, {{"gpu0.temp", 75, 84}}, 300).empty());
	ck_assert(predict({h.begin(), h.begin() + 3}, {{"gpu0.temp", 72, 84}}, 1800).empty());
	ck_assert(predict(h, {{"gpu0.temp", 85, 84}}, 1800).empty());
	// Falling values never warn.
	std::vector<HistoryPoint> down;
	for (int i = 0; i < 6; i++)
		down.push_back({i * 60, {{"gpu0.temp", 80.0 - i}}});
	ck_assert(predict(down, {{"gpu0.temp", 75, 84}}, 1800).empty());
}
END_TEST

START_TEST(failing_sequences_warn_before_the_threshold)
{
	for (const char *name : {"fan-failure", "thermal-creep", "ecc-storm", "ib-degrading"}) {
		Sequence s = load(name);
		ReplayResult r = replay(s);
		ck_assert_int_eq(r.fails_at, s.fails_at); // the header's fails_at, counted by the generator
		ck_assert_msg(r.lead_s() > 0, "%s: no warning before %lld", name, static_cast<long long>(s.fails_at));
		std::printf("predictor: %-14s warns %4lld s before the threshold (%d warning checks)\n", name,
			    static_cast<long long>(r.lead_s()), r.warnings);
	}
}
END_TEST

START_TEST(healthy_sequences_never_warn)
{
	for (const char *name : {"healthy-noise", "healthy-load-step", "healthy-ecc-slow", "healthy-ib-flat"}) {
		Sequence s = load(name);
		ReplayResult r = replay(s);
		ck_assert_int_eq(r.fails_at, -1);
		ck_assert_msg(r.warnings == 0, "%s: %d false warnings", name, r.warnings);
	}
}
END_TEST

START_TEST(history_file_round_trip_and_verdict)
{
	char tmpl[] = "/tmp/loom-health-pred.XXXXXX";
	std::string dir = ::mkdtemp(tmpl);
	std::string path = dir + "/history-n1.json";
	HealthConfig c;
	Verdict v;
	// Six checks a minute apart with GPU 0 warming 1 C/min from 70 C.
	for (int i = 0; i < 6; i++) {
		NodeSample s;
		GpuState g;
		g.index = 0;
		g.temp_c = 70.0 + i;
		s.gpus.push_back(g);
		v = Verdict{};
		predict_and_judge(path, s, c, 1000 + 60 * i, v);
	}
	ck_assert(v.outcome == Outcome::suspect);
	ck_assert_sstr_eq(v.findings.back().check, "predict");
	ck_assert_sstr_eq(v.actions[0], "suspect");
	auto h = load_history(path);
	ck_assert(h && h->size() == 6);
	ck_assert_int_eq(h->back().t, 1300);
	// A corrupt history is replaced, not fatal.
	ck_assert(write_file_atomic(path, "{not json").has_value());
	ck_assert(!load_history(path));
	Verdict w;
	NodeSample s;
	predict_and_judge(path, s, c, 5000, w);
	ck_assert(w.outcome == Outcome::ok);
	ck_assert(load_history(path).has_value());
	std::string cmd = "rm -rf '" + dir + "'";
	ck_assert_int_eq(std::system(cmd.c_str()), 0);
}
END_TEST

START_TEST(ib_hw_counters_are_metrics)
{
	// The hw_counters with a limit are watched for trends; congestion is not.
	NodeSample s;
	IbPort p;
	p.device = "mlx5_4";
	p.state = "ACTIVE";
	p.hw_counters = {{"local_ack_timeout_err", 12}, {"np_cnp_sent", 900000}, {"out_of_sequence", 3}};
	s.ib_ports.push_back(p);
	auto c = parse_health_config("ib_hw_counters_drain=out_of_sequence:50\n", "t");
	ck_assert(c.has_value());
	auto m = metrics_of(s, *c);
	ck_assert_int_eq(m.size(), 2);
	ck_assert_sstr_eq(m[0].name, "ib.mlx5_4/1.local_ack_timeout_err");
	ck_assert(m[0].value == 12 && m[0].threshold == 1000);
	ck_assert_sstr_eq(m[1].name, "ib.mlx5_4/1.out_of_sequence");
	ck_assert(m[1].threshold == 50);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_predictor");
	TCase *tc = tcase_create("predictor");
	tcase_add_test(tc, trend_fit);
	tcase_add_test(tc, failing_sequences_warn_before_the_threshold);
	tcase_add_test(tc, healthy_sequences_never_warn);
	tcase_add_test(tc, history_file_round_trip_and_verdict);
	tcase_add_test(tc, ib_hw_counters_are_metrics);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
