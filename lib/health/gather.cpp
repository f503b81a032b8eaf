#include "lib/health/gather.hpp"

#include "lib/health/host_sysfs.hpp"
#include "lib/health/infiniband.hpp"
#include "lib/health/kernel_log.hpp"
#include "lib/health/link_flaps.hpp"
#include "lib/health/nvidia_smi.hpp"
#include "lib/health/nvml.hpp"
#include "lib/util/fs.hpp"

#include <atomic>
#include <chrono>
#include <sys/stat.h>

namespace loom::health {
namespace {

bool exists(const std::string &p)
{
	struct stat st;
	return ::stat(p.c_str(), &st) == 0;
}

std::atomic<const char *> stage{""};

class Timer {
public:
	Timer(NodeSample &s, const char *name) : s_(s), name_(name), t0_(std::chrono::steady_clock::now())
	{
		stage.store(name, std::memory_order_relaxed);
	}
	~Timer()
	{
		stage.store("", std::memory_order_relaxed);
		auto dt = std::chrono::steady_clock::now() - t0_;
		s_.collect_ms[name_] += std::chrono::duration<double, std::milli>(dt).count();
	}

private:
	NodeSample &s_;
	const char *name_;
	std::chrono::steady_clock::time_point t0_;
};

void note(NodeSample &s, const char *collector, const Error &e) { s.errors.push_back({collector, e.str()}); }

// Where GPUs are expected (a count from the config or Slurm's Gres, or the
// NVIDIA driver loaded under the root), no GPU data is an error: the check
// cannot judge the GPUs, and must not look healthy.
std::string gpus_expected(const GatherOptions &opt)
{
	if (opt.expected_gpus > 0)
		return std::to_string(opt.expected_gpus) + " GPUs expected";
	if (exists(path_join(opt.root, "proc/driver/nvidia")))
		return "the NVIDIA driver is loaded";
	return {};
}

void gather_gpus(const GatherOptions &opt, NodeSample &s)
{
	Timer t(s, "gpu");
	std::string src = opt.gpu_source;
	std::string smi = opt.nvidia_smi_file.empty() ? path_join(opt.root, "nvidia-smi-q.txt") : opt.nvidia_smi_file;
	if (src == "none")
		return;
	if (src == "auto")
		src = (!opt.nvidia_smi_file.empty() || !opt.live()) ? "nvidia-smi" : "nvml";
	const std::string expected = gpus_expected(opt);
	if (src == "nvml") {
		auto session = NvmlSession::open(opt.nvml_library);
		if (!session) {
			// No NVML: an error only where GPUs are expected.
			if (!expected.empty())
				note(s, "gpu", Error(session.error().str() + " (" + expected + ")"));
			return;
		}
		auto gpus = (*session)->gpus();
		if (!gpus) {
			note(s, "gpu", gpus.error());
			return;
		}
		if (gpus->empty() && !expected.empty()) {
			note(s, "gpu", Error("nvml", "NVML sees no GPU (" + expected + ")"));
			return;
		}
		s.gpus = std::move(*gpus);
		s.gpu_source = "nvml";
		return;
	}
	if (!exists(smi)) {
		if (!expected.empty())
			note(s, "gpu", Error(smi, "no GPU data (" + expected + ")"));
		return;
	}
	auto rep = read_nvidia_smi_q(smi);
	if (!rep) {
		note(s, "gpu", rep.error());
		return;
	}
	if (rep->gpus.empty()) {
		// An empty or binary file, or "No devices were found": no GPU data.
		if (!expected.empty())
			note(s, "gpu", Error(smi, "no GPU in the nvidia-smi -q output (" + expected + ")"));
		return;
	}
	s.gpus = std::move(rep->gpus);
	s.gpu_source = "nvidia-smi";
	std::string nvl = path_join(opt.root, "nvidia-smi-nvlink-status.txt");
	if (exists(nvl))
		if (auto n = read_nvlink_status(nvl, s.gpus); !n)
			note(s, "gpu", n.error());
}

// GPU index of a bus id from the driver's proc file, when no GPU list has it.
int minor_from_proc(const std::string &root, const std::string &bus)
{
	auto text = read_collector_file(path_join(root, "proc/driver/nvidia/gpus/" + bus + ".0/information"), 1 << 16);
	if (!text)
		return -1;
	for (const auto &line : split_lines(*text)) {
		if (line.rfind("Device Minor:", 0) == 0) {
			auto v = trim(std::string_view(line).substr(13));
			int n = 0;
			for (char c : v) {
				if (c < '0' || c > '9')
					return -1;
				n = n * 10 + (c - '0');
				if (n > 4095)
					return -1;
			}
			return v.empty() ? -1 : n;
		}
	}
	return -1;
}

void gather_kernel_log(const GatherOptions &opt, NodeSample &s)
{
	Timer t(s, "kernel_log");
	std::vector<std::string> lines;
	bool any = false;
	for (const auto &p : opt.kernel_logs) {
		std::string full = path_join(opt.root, p);
		if (!exists(full))
			continue;
		auto text = read_kernel_log(opt.root, p, opt.kmsg_cursor);
		if (!text) {
			note(s, "kernel_log", text.error());
			continue;
		}
		KernelLog log = parse_kernel_log(*text);
		map_xids_to_gpus(log.xids, s.gpus);
		for (auto &x : log.xids)
			if (x.gpu_index < 0 && !x.pci_bus.empty())
				x.gpu_index = minor_from_proc(opt.root, x.pci_bus);
		s.xids = std::move(log.xids);
		s.kernel_events = std::move(log.events);
		lines = std::move(log.lines);
		any = true;
		break; // the first log that exists is the kernel log
	}
	if (!any && opt.live())
		note(s, "kernel_log", Error("no readable kernel log among the configured paths"));
	if (!opt.syslog.empty() && exists(path_join(opt.root, opt.syslog))) {
		auto text = read_kernel_log(opt.root, opt.syslog);
		if (text)
			for (auto &l : split_lines(*text))
				lines.push_back(std::move(l));
		else
			note(s, "syslog", text.error());
	}
	s.flaps = count_link_flaps(lines);
}

void gather_network(const GatherOptions &opt, NodeSample &s)
{
	Timer t(s, "network");
	std::string ib = path_join(opt.root, "sys/class/infiniband");
	std::string ibstat = path_join(opt.root, "ibstat.txt");
	if (!exists(ib) && exists(ibstat)) {
		auto ports = read_ibstat(ibstat);
		if (ports)
			s.ib_ports = std::move(*ports);
		else
			note(s, "infiniband", ports.error());
	} else {
		// Every problem is named; the ports read cleanly are kept.
		std::vector<Error> problems;
		s.ib_ports = read_ib_sysfs(ib, problems);
		for (const auto &e : problems)
			note(s, "infiniband", e);
	}
	std::vector<Error> problems;
	s.net = read_net(path_join(opt.root, "sys/class/net"), {"lo"}, problems);
	for (const auto &e : problems)
		note(s, "net", e);
}

void gather_host(const GatherOptions &opt, NodeSample &s)
{
	Timer t(s, "host");
	std::vector<Error> problems;
	s.hwmon = read_hwmon(path_join(opt.root, "sys/class/hwmon"), problems);
	for (const auto &e : problems)
		note(s, "hwmon", e);
	problems.clear();
	s.edac = read_edac(path_join(opt.root, "sys/devices/system/edac/mc"), problems);
	for (const auto &e : problems)
		note(s, "edac", e);
}

} // namespace

const char *gather_stage() { return stage.load(std::memory_order_relaxed); }

NodeSample gather(const GatherOptions &opt)
{
	NodeSample s;
	s.root = opt.root.empty() ? "/" : opt.root;
	GatherOptions o = opt;
	o.root = s.root;
	gather_gpus(o, s); // first: the kernel log maps Xids through the GPU list
	gather_kernel_log(o, s);
	gather_network(o, s);
	gather_host(o, s);
	return s;
}

} // namespace loom::health
