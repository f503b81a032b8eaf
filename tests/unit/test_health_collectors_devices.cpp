// Unit tests for the lib/health collectors of the devices, on files recorded
// on real machines (tests/data/health, see PROVENANCE there): nvidia-smi -q,
// NVLink status, InfiniBand sysfs and ibstat; and NVML and the GPU probe
// where there is no GPU. Expected numbers are counted in the recorded files
// by hand or with grep; the comment next to each says how.
#include "lib/health/gpu_probe.hpp"
#include "lib/health/infiniband.hpp"
#include "lib/health/nvidia_smi.hpp"
#include "lib/health/nvml.hpp"
#include "lib/util/nvml_api.hpp"

#include <string>
#include <vector>

// Last: check.h defines a fail() macro that clashes with <ios>.
#include "tests/unit/health_collectors_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;

START_TEST(nvidia_smi_h100)
{
	NvidiaSmiReport rep = h100();
	ck_assert_sstr_eq(rep.driver_version, "535.161.08");
	// "Attached GPUs : 8" and eight "GPU 0000..." blocks
	ck_assert_int_eq(rep.attached, 8);
	ck_assert_int_eq(rep.gpus.size(), 8);
	const GpuState &g = rep.gpus[0];
	ck_assert_int_eq(g.index, 0);
	ck_assert_sstr_eq(g.pci_bus, "0000:19:00");
	ck_assert_sstr_eq(g.uuid, "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa");
	ck_assert_sstr_eq(g.name, "NVIDIA H100 80GB HBM3");
	ck_assert(g.temp_c && *g.temp_c == 29.0);                       // GPU Current Temp : 29 C
	ck_assert(g.mem_temp_c && *g.mem_temp_c == 39.0);               // Memory Current Temp : 39 C
	ck_assert(g.power_w && *g.power_w > 67.7 && *g.power_w < 67.8); // 67.74 W
	ck_assert(g.power_limit_w && *g.power_limit_w == 700.0);
	ck_assert(g.hw_slowdown && g.hw_power_brake && !g.hw_thermal_slowdown); // "HW Power Brake Slowdown : Active"
	ck_assert(g.ecc_vol_dram_uncorr && *g.ecc_vol_dram_uncorr == 0);
	ck_assert(g.ecc_agg_sram_uncorr && *g.ecc_agg_sram_uncorr == 0); // parity + SEC-DED
	ck_assert(!g.retired_sbe);                                       // Retired Pages: N/A on H100
	ck_assert(g.remap_pending && !*g.remap_pending);
	ck_assert(g.pcie_replays && *g.pcie_replays == 67); // Replays Since Reset : 67
	ck_assert(g.max_sm_clock_mhz && *g.max_sm_clock_mhz == 1980);
	ck_assert_int_eq(rep.gpus[4].index, 4);
	ck_assert_sstr_eq(rep.gpus[4].pci_bus, "0000:9b:00");
}
END_TEST

START_TEST(nvidia_smi_truncated_is_an_error)
{
	auto rep = parse_nvidia_smi_q(recorded("nvidia-smi-q-truncated.txt"), "truncated.txt");
	ck_assert(!rep);
	// "Attached GPUs : 8" but the text stops inside the first GPU block
	ck_assert_msg(rep.error().str().find("8 GPUs attached but 1 described") != std::string::npos, "%s",
		      rep.error().str().c_str());
}
END_TEST

START_TEST(nvidia_smi_retired_pages_azure)
{
	auto orig = parse_nvidia_smi_q(recorded("azure-orig_nvsmi8_output.txt"), "orig");
	auto bad = parse_nvidia_smi_q(recorded("azure-bad_nvsmi8_output.txt"), "bad");
	ck_assert(orig && bad);
	ck_assert_int_eq(bad->gpus.size(), 8);
	// bad: "Pending Page Blacklist : Yes" on GPUs 00000002, 4, 6 and 8 (grep -c -> 4)
	int pending = 0;
	for (const auto &g : bad->gpus)
		pending += g.retired_pending.value_or(false);
	ck_assert_int_eq(pending, 4);
	// GPU 00000002: Single Bit 2, Double Bit 61; no Minor Number, so index = order
	ck_assert_int_eq(bad->gpus[1].index, 1);
	ck_assert_sstr_eq(bad->gpus[1].pci_bus, "0002:00:00");
	ck_assert_int_eq(*bad->gpus[1].retired_dbe, 61);
	ck_assert_int_eq(*bad->gpus[1].retired_sbe, 2);
}
END_TEST

START_TEST(nvlink_status)
{
	std::vector<GpuState> gpus;
	auto n = parse_nvlink_status(recorded("nvidia-smi.nvlink.status.a100"), "a100", gpus);
	ck_assert(n.has_value());
	// 8 "GPU" lines, 96 "Link N:" lines (12 per GPU), none inactive
	ck_assert_int_eq(*n, 96);
	ck_assert_int_eq(gpus.size(), 8);
	ck_assert_int_eq(gpus[0].nvlinks.size(), 12);
	ck_assert(gpus[0].nvlinks[11].active);
	std::vector<GpuState> bad;
	auto m = parse_nvlink_status(recorded("azure-bad_nvlink_status.txt"), "bad", bad);
	ck_assert(m.has_value());
	// "GPU 6: ..." then "all links are inactive": reported, with no active link
	ck_assert_int_eq(bad.size(), 1);
	ck_assert_int_eq(bad[0].index, 6);
	ck_assert(bad[0].nvlink_reported);
	ck_assert_int_eq(bad[0].nvlinks.size(), 0);
}
END_TEST

START_TEST(ib_sysfs_h100)
{
	auto ports = read_ib_sysfs(test::data("health/sys-class-infiniband-h100"));
	ck_assert(ports.has_value());
	// ls sys-class-infiniband-h100 -> 9 devices with one port each
	ck_assert_int_eq(ports->size(), 9);
	const IbPort &p = (*ports)[1]; // mlx5_1 (sorted)
	ck_assert_sstr_eq(p.device, "mlx5_1");
	ck_assert_sstr_eq(p.state, "ACTIVE");            // "4: ACTIVE"
	ck_assert_sstr_eq(p.phys_state, "LinkUp");       // "5: LinkUp"
	ck_assert(p.rate_gbps && *p.rate_gbps == 400.0); // "400 Gb/sec (4X NDR)"
	ck_assert_sstr_eq(p.link_layer, "InfiniBand");
	ck_assert_int_eq(p.counters.at("link_downed"), 255); // cat .../counters/link_downed
	ck_assert_int_eq(p.counters.at("port_rcv_errors"), 14);
	ck_assert_int_eq(p.hw_counters.at("roce_adp_retrans"), 3); // hw_counters/roce_adp_retrans
	ck_assert_sstr_eq(ports->back().device, "mlx5_bond_0");
	ck_assert_sstr_eq(ports->back().link_layer, "Ethernet");
	// A missing class directory: no HCAs, no error.
	auto none = read_ib_sysfs("/nonexistent/sys/class/infiniband");
	ck_assert(none && none->empty());
}
END_TEST

START_TEST(ibstat_text)
{
	auto down = parse_ibstat(recorded("ibstat-h100-port-down.txt"), "down");
	ck_assert(down.has_value());
	// grep -c "State: Down" -> 3 (mlx5_2, mlx5_7, mlx5_8), 12 CA blocks
	ck_assert_int_eq(down->size(), 12);
	int n_down = 0;
	for (const auto &p : *down)
		n_down += p.state == "DOWN";
	ck_assert_int_eq(n_down, 3);
	auto up = parse_ibstat(recorded("ibstat-h100-all-active.txt"), "up");
	ck_assert(up.has_value());
	for (const auto &p : *up)
		ck_assert_sstr_eq(p.state, "ACTIVE");
	ck_assert(!parse_ibstat("\tPort 1:\n\t\tState: Active\n", "x"));
}
END_TEST

START_TEST(nvml_absent_is_reported)
{
	// A library that does not exist stands for a machine without the driver:
	// the session must fail and say so, never report zero faults.
	auto s = NvmlSession::open("libnvidia-ml-loom-test-absent.so.1");
	ck_assert(!s);
	ck_assert_msg(s.error().str().find("NVML not available") != std::string::npos, "%s", s.error().str().c_str());
}
END_TEST

START_TEST(nvml_without_its_calls_is_refused)
{
	// A library that loads but is not NVML (libc here; an old or partial
	// libnvidia-ml alike): the session names the library and the calls it
	// lacks, and nvml::Library says which of a list are absent.
	auto s = NvmlSession::open("libc.so.6");
	ck_assert(!s);
	ck_assert_msg(s.error().str().find("libc.so.6 lacks nvmlInit_v2, nvmlShutdown, nvmlErrorString") !=
			      std::string::npos,
		      "%s", s.error().str().c_str());
	auto lib = loom::nvml::Library::open("libc.so.6");
	ck_assert(lib.has_value());
	std::string lacks = (*lib)->lacking({"malloc", "nvmlDeviceGetUUID", "free", "nvmlEventSetWait_v2"});
	ck_assert_str_eq(lacks.c_str(), "nvmlDeviceGetUUID, nvmlEventSetWait_v2");
	ck_assert(!(*lib)->api().init && !(*lib)->api().nvlink_state);
	std::string text = (*lib)->error(9);
	ck_assert_str_eq(text.c_str(), "NVML error 9");
}
END_TEST

START_TEST(gpu_probe_without_gpu_never_passes)
{
	// No CUDA runtime at all: not run, not passed, and it says why.
	ProbeResult r = probe_memory_bandwidth(0, 1 << 20, 1, "libcudart-loom-test-absent.so");
	ck_assert(!r.ran);
	ck_assert(!r.passed());
	ck_assert_msg(r.why.rfind("no GPU: no CUDA runtime", 0) == 0, "%s", r.why.c_str());
	// An empty result never passes either, whatever the threshold.
	ProbeResult empty;
	empty.ran = true;
	ck_assert(!empty.passed());
}
END_TEST

TCase *health_device_collector_tests()
{
	TCase *tc = tcase_create("devices");
	tcase_add_test(tc, nvidia_smi_h100);
	tcase_add_test(tc, nvidia_smi_truncated_is_an_error);
	tcase_add_test(tc, nvidia_smi_retired_pages_azure);
	tcase_add_test(tc, nvlink_status);
	tcase_add_test(tc, ib_sysfs_h100);
	tcase_add_test(tc, ibstat_text);
	tcase_add_test(tc, nvml_absent_is_reported);
	tcase_add_test(tc, nvml_without_its_calls_is_refused);
	tcase_add_test(tc, gpu_probe_without_gpu_never_passes);
	return tc;
}
