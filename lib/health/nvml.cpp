#include "lib/health/nvml.hpp"

#include "lib/util/log.hpp"
#include "lib/util/nvml_api.hpp"

#include <cstring>

namespace loom::health {

namespace nv = loom::nvml;

// What the collector cannot do without; every other call is optional (an
// older driver lacks some: their fields stay unreported).
expected<std::unique_ptr<NvmlSession>> NvmlSession::open(const std::string &library)
{
	auto lib = nv::Library::open(library);
	if (!lib)
		return unexpected(lib.error());
	std::string missing =
		(*lib)->lacking({"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString", "nvmlDeviceGetCount_v2",
				 "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetUUID"});
	if (!missing.empty())
		return unexpected("nvml", (*lib)->name() + " lacks " + missing);
	if (nv::Return rc = (*lib)->api().init(); rc != nv::success)
		return unexpected("nvml", "nvmlInit failed: " + (*lib)->error(rc));
	std::unique_ptr<NvmlSession> s(new NvmlSession());
	s->lib_ = std::move(*lib);
	const nv::Api &a = s->lib_->api();
	char ver[96] = {};
	if (a.driver_version && a.driver_version(ver, sizeof(ver)) == nv::success)
		s->driver_ = ver;
	return s;
}

NvmlSession::~NvmlSession()
{
	if (!lib_)
		return;
	const nv::Api &a = lib_->api();
	if (events_ && a.event_set_free)
		a.event_set_free(static_cast<nv::EventSet>(events_));
	a.shutdown(); // the library is closed with lib_
}

namespace {

// Name, minor number, temperature, power, SM clocks and throttle reasons:
// each one this NVML has and answers.
void read_readings(const nv::Api &a, nv::Device d, GpuState &g)
{
	char buf[128] = {};
	if (a.name && a.name(d, buf, sizeof(buf)) == nv::success)
		g.name = buf;
	unsigned u = 0;
	if (a.minor && a.minor(d, &u) == nv::success)
		g.index = static_cast<int>(u);
	if (a.temperature && a.temperature(d, nv::temperature_gpu, &u) == nv::success)
		g.temp_c = u;
	if (a.power && a.power(d, &u) == nv::success)
		g.power_w = u / 1000.0;
	if (a.power_limit && a.power_limit(d, &u) == nv::success)
		g.power_limit_w = u / 1000.0;
	if (a.clock && a.clock(d, nv::clock_sm, &u) == nv::success)
		g.sm_clock_mhz = u;
	if (a.max_clock && a.max_clock(d, nv::clock_sm, &u) == nv::success)
		g.max_sm_clock_mhz = u;
	unsigned long long reasons = 0;
	if (a.throttle && a.throttle(d, &reasons) == nv::success) {
		g.sw_power_cap = reasons & 0x4;
		g.hw_slowdown = reasons & 0x8;
		g.sw_thermal_slowdown = reasons & 0x20;
		g.hw_thermal_slowdown = reasons & 0x40;
		g.hw_power_brake = reasons & 0x80;
	}
}

// ECC counts, retired pages and remapped rows.
void read_memory_errors(const nv::Api &a, nv::Device d, GpuState &g)
{
	// ECC: totals per (corrected|uncorrected, volatile|aggregate); DRAM
	// (device memory, location 2) separately, SRAM is the rest.
	auto ecc = [&](unsigned type, unsigned counter, Count &sram, Count &dram) {
		unsigned long long total = 0, dev = 0;
		if (!a.ecc_total || a.ecc_total(d, type, counter, &total) != nv::success)
			return;
		if (a.mem_errors && a.mem_errors(d, type, counter, 2, &dev) == nv::success && dev <= total) {
			dram = static_cast<int64_t>(dev);
			sram = static_cast<int64_t>(total - dev);
		} else {
			dram = static_cast<int64_t>(total);
		}
	};
	ecc(0, 0, g.ecc_vol_sram_corr, g.ecc_vol_dram_corr);
	ecc(1, 0, g.ecc_vol_sram_uncorr, g.ecc_vol_dram_uncorr);
	ecc(0, 1, g.ecc_agg_sram_corr, g.ecc_agg_dram_corr);
	ecc(1, 1, g.ecc_agg_sram_uncorr, g.ecc_agg_dram_uncorr);
	if (a.retired) {
		unsigned cnt = 0;
		nv::Return rc = a.retired(d, 0, &cnt, nullptr);
		if (rc == nv::success || rc == nv::error_insufficient_size /* the count is set */)
			g.retired_sbe = cnt;
		cnt = 0;
		rc = a.retired(d, 1, &cnt, nullptr);
		if (rc == nv::success || rc == nv::error_insufficient_size)
			g.retired_dbe = cnt;
	}
	unsigned u = 0, u2 = 0, u3 = 0, u4 = 0;
	if (a.retired_pending && a.retired_pending(d, &u) == nv::success)
		g.retired_pending = u != 0;
	if (a.remapped && a.remapped(d, &u, &u2, &u3, &u4) == nv::success) {
		g.remap_corr = u;
		g.remap_uncorr = u2;
		g.remap_pending = u3 != 0;
		g.remap_failure = u4 != 0;
	}
}

// PCIe replays, and each NVLink's state and error counters.
void read_links(const nv::Api &a, nv::Device d, GpuState &g)
{
	unsigned u = 0;
	if (a.replays && a.replays(d, &u) == nv::success)
		g.pcie_replays = u;
	if (!a.nvlink_state)
		return;
	for (unsigned l = 0; l < nv::max_links; l++) {
		nv::EnableState on = 0;
		if (a.nvlink_state(d, l, &on) != nv::success)
			continue; // no such link on this GPU
		g.nvlink_reported = true;
		NvLinkState ls;
		ls.link = static_cast<int>(l);
		ls.active = on != 0;
		unsigned long long v = 0;
		if (a.nvlink_errors && a.nvlink_errors(d, l, 0, &v) == nv::success)
			ls.replay_errors = static_cast<int64_t>(v);
		if (a.nvlink_errors && a.nvlink_errors(d, l, 1, &v) == nv::success)
			ls.recovery_errors = static_cast<int64_t>(v);
		if (a.nvlink_errors && a.nvlink_errors(d, l, 2, &v) == nv::success)
			ls.crc_errors = static_cast<int64_t>(v);
		g.nvlinks.push_back(ls);
	}
}

} // namespace

expected<std::vector<GpuState>> NvmlSession::gpus()
{
	const nv::Api &a = lib_->api();
	unsigned n = 0;
	if (nv::Return rc = a.count(&n); rc != nv::success)
		return unexpected("nvml", std::string("nvmlDeviceGetCount: ") + lib_->error(rc));
	std::vector<GpuState> out;
	for (unsigned i = 0; i < n; i++) {
		nv::Device d = nullptr;
		if (nv::Return rc = a.by_index(i, &d); rc != nv::success)
			return unexpected("nvml: GPU " + std::to_string(i), lib_->error(rc));
		GpuState g;
		g.index = static_cast<int>(i);
		nv::PciInfo pci{};
		if (nv::Return rc = a.pci(d, &pci); rc != nv::success)
			return unexpected("nvml: GPU " + std::to_string(i),
					  std::string("PCI info: ") + lib_->error(rc));
		g.pci_bus = normalize_pci(pci.busId);
		char buf[128] = {};
		if (a.uuid(d, buf, sizeof(buf)) == nv::success)
			g.uuid = buf;
		read_readings(a, d, g);
		read_memory_errors(a, d, g);
		read_links(a, d, g);
		out.push_back(std::move(g));
	}
	return out;
}

status NvmlSession::watch_xids()
{
	const nv::Api &a = lib_->api();
	if (!a.event_set_create || !a.register_events || !a.event_wait)
		return unexpected("nvml", "this NVML has no event API");
	nv::EventSet set = nullptr;
	if (nv::Return rc = a.event_set_create(&set); rc != nv::success)
		return unexpected("nvml", std::string("nvmlEventSetCreate: ") + lib_->error(rc));
	events_ = set;
	unsigned n = 0;
	if (a.count(&n) != nv::success)
		return unexpected("nvml", "nvmlDeviceGetCount failed");
	for (unsigned i = 0; i < n; i++) {
		nv::Device d = nullptr;
		if (a.by_index(i, &d) != nv::success)
			continue;
		nv::Return rc = a.register_events(d, nv::event_xid_critical, set);
		if (rc != nv::success)
			log_debug("nvml: GPU %u: Xid events not supported: %s", i, lib_->error(rc).c_str());
	}
	return ok();
}

expected<std::vector<XidEvent>> NvmlSession::take_xids(unsigned timeout_ms)
{
	std::vector<XidEvent> out;
	if (!events_)
		return unexpected("nvml", "take_xids without watch_xids");
	const nv::Api &a = lib_->api();
	for (int guard = 0; guard < 10000; guard++) {
		nv::EventData ev{};
		nv::Return rc = a.event_wait(static_cast<nv::EventSet>(events_), &ev, guard == 0 ? timeout_ms : 0);
		if (rc == nv::error_timeout)
			break;
		if (rc != nv::success)
			return unexpected("nvml", std::string("nvmlEventSetWait: ") + lib_->error(rc));
		XidEvent x;
		x.xid = static_cast<int>(ev.eventData);
		nv::PciInfo pci{};
		if (ev.device && a.pci(ev.device, &pci) == nv::success)
			x.pci_bus = normalize_pci(pci.busId);
		x.message = "reported by NVML's event API";
		out.push_back(std::move(x));
	}
	return out;
}

} // namespace loom::health
