// loom-topo.conf has one reader (lib/place/topo_conf.hpp), and every process
// that reads the file goes through it: select/topo in slurmctld
// (read_topo_conf), spank_place at submit, `loom place` and `loom sim`
// (read_tier_table), spank_place in slurmstepd (load_fabric_in, behind
// loom_fabric.so). Each is fed the same bad files and must refuse each with
// the same message, naming the file, the line and the key; a good file is
// accepted by all. The tools are run as the loom binary, the module opened
// as spank_place opens it.
#include "tests/unit/check_main.hpp"

#include "lib/place/fabric.hpp"
#include "lib/place/tiers.hpp"
#include "lib/place/topo_conf.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/subprocess.hpp"
#include "plugins/spank_place/fabric_module.hpp"
#include "tools/command.hpp"

#include <dlfcn.h>
#include <string>
#include <unistd.h>

using namespace loom;

namespace {

std::string builddir()
{
	const char *b = std::getenv("LOOM_BUILDDIR");
	return b && *b ? b : ".";
}

std::string tmpdir()
{
	char t[] = "/tmp/loom-topo-conf-XXXXXX";
	return mkdtemp(t) ? std::string(t) : std::string("/tmp");
}

// What one reader answered: "" when it accepted the file.
struct Answer {
	std::string reader;
	std::string error;
};

std::string loom_output(const std::vector<std::string> &args, int &exit_code)
{
	std::vector<std::string> argv = {builddir() + "/tools/loom"};
	argv.insert(argv.end(), args.begin(), args.end());
	auto r = run_command(argv, 60);
	ck_assert_msg(r.has_value(), "%s: %s", argv[0].c_str(), r ? "" : r.error().str().c_str());
	exit_code = r->exit_code;
	return r->output;
}

// `loom place` and `loom sim` print "loom place: MESSAGE" and stop; on a
// good file they go on (place prints its weights, sim asks for a cluster).
Answer tool_answer(const std::string &cmd, const std::string &conf, const std::vector<std::string> &more)
{
	std::vector<std::string> args = {cmd, "--topo-conf", conf};
	args.insert(args.end(), more.begin(), more.end());
	int rc = 0;
	std::string out = loom_output(args, rc);
	std::string said = "loom " + cmd + ": ";
	size_t at = out.find(said + conf);
	if (at == std::string::npos)
		return {"loom " + cmd, ""};
	std::string line = out.substr(at + said.size(), out.find('\n', at) - at - said.size());
	ck_assert_msg(rc == tool::exit_problems, "loom %s exited %d on %s", cmd.c_str(), rc, line.c_str());
	return {"loom " + cmd, line};
}

Answer module_answer(const std::string &dir)
{
	std::string path = builddir() + "/plugins/spank_place/.libs/loom_fabric.so";
	void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != nullptr, "%s: %s", path.c_str(), dlerror());
	auto ranks = reinterpret_cast<loom_fabric_step_ranks_fn>(dlsym(h, "loom_fabric_step_ranks"));
	auto release = reinterpret_cast<loom_fabric_free_fn>(dlsym(h, "loom_fabric_free"));
	ck_assert(ranks && release);
	loom_step_ranks r{};
	int rc = ranks(dir.c_str(), 0, "n[1-2]", "n1", "", &r);
	Answer a{"loom_fabric.so", rc == 0 ? "" : r.error ? r.error : "(no message)"};
	release(&r);
	dlclose(h);
	return a;
}

template <typename T>
Answer lib_answer(const char *reader, const expected<T> &r)
{
	return {reader, r ? "" : r.error().str()};
}

// Every reader, on dir/loom-topo.conf as it is now.
std::vector<Answer> every_reader(const std::string &dir)
{
	std::string conf = dir + "/loom-topo.conf";
	return {
		lib_answer("read_topo_conf (select/topo)", place::read_topo_conf(conf)),
		lib_answer("read_tier_table (spank_place, loom place, loom sim)", place::read_tier_table(conf)),
		lib_answer("load_fabric_in (loom_fabric.so)", place::load_fabric_in(dir, false)),
		module_answer(dir),
		tool_answer("place", conf, {"--show-weights"}),
		tool_answer("sim", conf, {}),
	};
}

const char *k_good = "# the site's classes\n"
		     "gpu_classes=a100,h100\n"
		     "gpu_class.a100=throughput:1,mem:80G,price:1.10\n"
		     "gpu_class.h100=throughput:2,mem:80G,price:1.90\n"
		     "gpu_tier.cheap=value,mem:80G\n"
		     "max_candidates=4 placement=topo\n"
		     "spares=leaf:1 spare_lend=1h\n";

// A bad line put after the good ones (line 8), or in place of one.
struct Bad {
	const char *what;
	std::string text;
	int line;
	const char *key;
};

std::vector<Bad> bad_files()
{
	std::string good = k_good;
	return {
		{"unknown key", good + "frobnicate=1\n", 8, "'frobnicate'"},
		{"misspelt key", "gpu_clases=a100,h100\n" + good.substr(good.find("gpu_class.")), 1, "'gpu_clases'"},
		{"misspelt select/topo key", good + "max_candiates=2\n", 8, "'max_candiates'"},
		{"bad value of a select/topo key", good + "will_run=later\n", 8, "'will_run'"},
		{"bad value of a class", good + "gpu_class.b200=throughput:fast\n", 8, "'gpu_class.b200'"},
		{"key given twice", good + "gpu_classes=h100\n", 8, "'gpu_classes'"},
		{"bad spares", good.substr(0, good.find("spares=")) + "spares=leaf:0\n", 7, "'spares'"},
		{"relative failure_stats", good + "failure_stats=stats.json\n", 8, "'failure_stats'"},
	};
}

} // namespace

START_TEST(every_reader_accepts_a_good_file)
{
	std::string d = tmpdir();
	ck_assert(write_file_atomic(d + "/topology.conf", "SwitchName=leaf1 Nodes=n[1-2]\n").has_value());
	ck_assert(write_file_atomic(d + "/loom-topo.conf", k_good).has_value());
	for (const Answer &a : every_reader(d))
		ck_assert_msg(a.error.empty(), "%s refused the good file: %s", a.reader.c_str(), a.error.c_str());
	auto t = place::read_tier_table(d + "/loom-topo.conf");
	ck_assert(t.has_value() && t->classes.size() == 2 && t->site_tiers.size() == 1);
	// No file: the defaults, everywhere.
	unlink((d + "/loom-topo.conf").c_str());
	for (const Answer &a : every_reader(d))
		if (a.reader != "loom sim") // which needs classes to simulate
			ck_assert_msg(a.error.empty(), "%s refused a missing file: %s", a.reader.c_str(),
				      a.error.c_str());
	unlink((d + "/topology.conf").c_str());
	rmdir(d.c_str());
}
END_TEST

START_TEST(every_reader_refuses_a_bad_file_alike)
{
	std::string d = tmpdir();
	std::string conf = d + "/loom-topo.conf";
	ck_assert(write_file_atomic(d + "/topology.conf", "SwitchName=leaf1 Nodes=n[1-2]\n").has_value());
	for (const Bad &b : bad_files()) {
		ck_assert(write_file_atomic(conf, b.text).has_value());
		std::vector<Answer> all = every_reader(d);
		const std::string &first = all[0].error;
		std::string where = conf + ":" + std::to_string(b.line) + ": ";
		ck_assert_msg(first.rfind(where, 0) == 0 && first.find(b.key) != std::string::npos,
			      "%s: '%s' does not name %s and the key %s", b.what, first.c_str(), where.c_str(), b.key);
		for (const Answer &a : all)
			ck_assert_msg(a.error == first, "%s: %s answered '%s', %s '%s'", b.what, a.reader.c_str(),
				      a.error.c_str(), all[0].reader.c_str(), first.c_str());
	}
	unlink(conf.c_str());
	unlink((d + "/topology.conf").c_str());
	rmdir(d.c_str());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("topo_conf_readers");
	TCase *tc = tcase_create("readers");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_reader_accepts_a_good_file);
	tcase_add_test(tc, every_reader_refuses_a_bad_file_alike);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
