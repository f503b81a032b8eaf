// loom_fabric.so as spank_place uses it: opened with dlopen, its interface
// version checked, the rank order of a step read through its C entry point,
// and a bad fabric configuration answered with an error naming the file.
#include "tests/unit/check_main.hpp"

#include "lib/util/fs.hpp"
#include "plugins/spank_place/fabric_module.hpp"

#include <dlfcn.h>
#include <string>
#include <unistd.h>

namespace {

struct Module {
	void *h = nullptr;
	loom_fabric_abi_fn abi = nullptr;
	loom_fabric_step_ranks_fn ranks = nullptr;
	loom_fabric_free_fn release = nullptr;
};

Module open_module()
{
	const char *b = std::getenv("LOOM_BUILDDIR");
	std::string path = std::string(b && *b ? b : ".") + "/plugins/spank_place/.libs/loom_fabric.so";
	Module m;
	m.h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(m.h != nullptr, "%s: %s", path.c_str(), dlerror());
	m.abi = reinterpret_cast<loom_fabric_abi_fn>(dlsym(m.h, "loom_fabric_abi"));
	m.ranks = reinterpret_cast<loom_fabric_step_ranks_fn>(dlsym(m.h, "loom_fabric_step_ranks"));
	m.release = reinterpret_cast<loom_fabric_free_fn>(dlsym(m.h, "loom_fabric_free"));
	ck_assert(m.abi && m.ranks && m.release);
	return m;
}

std::string tmpdir()
{
	char t[] = "/tmp/loom-fabric-module-XXXXXX";
	return mkdtemp(t) ? std::string(t) : std::string("/tmp");
}

} // namespace

START_TEST(step_ranks_through_the_module)
{
	Module m = open_module();
	ck_assert_int_eq(m.abi(), LOOM_FABRIC_ABI);
	std::string d = tmpdir();
	ck_assert(loom::write_file_atomic(d + "/topology.conf",
					  "SwitchName=leaf1 Nodes=n1,n3\nSwitchName=leaf2 Nodes=n2,n4\n"
					  "SwitchName=top Switches=leaf[1-2]\n")
			  .has_value());
	loom_step_ranks r{};
	ck_assert_int_eq(m.ranks(d.c_str(), 0, "n[1-4]", "n3", "1(x4)", &r), 0);
	ck_assert(r.error == nullptr);
	ck_assert_int_eq(r.node_rank, 1);
	ck_assert_str_eq(r.order, "n1\nn3\nn2\nn4\n");
	ck_assert_str_eq(r.task_hosts, "n1\nn3\nn2\nn4\n");
	m.release(&r);
	ck_assert(r.order == nullptr && r.task_hosts == nullptr);
	// Task counts that do not fit the node list: the order still, no task lines.
	ck_assert_int_eq(m.ranks(d.c_str(), 0, "n[1-4]", "n3", "1(x3)", &r), 0);
	ck_assert_str_eq(r.task_hosts, "");
	m.release(&r);
	// A node outside the list, and a misspelt key in loom-topo.conf: errors.
	ck_assert_int_eq(m.ranks(d.c_str(), 0, "n[1-2]", "n3", "", &r), -1);
	ck_assert_msg(r.error && std::string(r.error).find("'n3'") != std::string::npos, "%s", r.error ? r.error : "");
	m.release(&r);
	ck_assert(loom::write_file_atomic(d + "/loom-topo.conf", "gpu_clases=a100\n").has_value());
	ck_assert_int_eq(m.ranks(d.c_str(), 0, "n[1-4]", "n3", "", &r), -1);
	ck_assert_msg(r.error && std::string(r.error).find("loom-topo.conf") != std::string::npos, "%s",
		      r.error ? r.error : "");
	ck_assert(r.order == nullptr);
	m.release(&r);
	ck_assert_int_eq(m.ranks(nullptr, 0, "n1", "n1", "", &r), -1);
	m.release(&r);
	unlink((d + "/loom-topo.conf").c_str());
	unlink((d + "/topology.conf").c_str());
	rmdir(d.c_str());
	dlclose(m.h);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("fabric_module");
	TCase *tc = tcase_create("module");
	tcase_add_test(tc, step_ranks_through_the_module);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
