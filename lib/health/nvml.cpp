#include "lib/health/nvml.hpp"

#include "lib/util/log.hpp"

#include <cstring>
#include <dlfcn.h>

namespace loom::health {

namespace {

// The few NVML declarations loom needs (nvml.h is not required at build time).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st *;
using nvmlEventSet_t = struct nvmlEventSet_st *;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
constexpr unsigned NVML_TEMPERATURE_GPU = 0;
constexpr unsigned NVML_CLOCK_SM = 1;
constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ULL;
constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;

struct nvmlPciInfo_t {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
};

struct nvmlEventData_t {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
};

} // namespace

struct NvmlSession::Api {
	nvmlReturn_t (*init)();
	nvmlReturn_t (*shutdown)();
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*driver_version)(char *, unsigned);
	nvmlReturn_t (*count)(unsigned *);
	nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*minor)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*clock)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*max_clock)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*ecc_total)(nvmlDevice_t, unsigned, unsigned, unsigned long long *);
	nvmlReturn_t (*mem_errors)(nvmlDevice_t, unsigned, unsigned, unsigned, unsigned long long *);
	nvmlReturn_t (*retired)(nvmlDevice_t, unsigned, unsigned *, unsigned long long *);
	nvmlReturn_t (*retired_pending)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *);
	nvmlReturn_t (*replays)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*nvlink_errors)(nvmlDevice_t, unsigned, unsigned, unsigned long long *);
	nvmlReturn_t (*event_set_create)(nvmlEventSet_t *);
	nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
	nvmlReturn_t (*event_wait)(nvmlEventSet_t, nvmlEventData_t *, unsigned);
	nvmlReturn_t (*event_set_free)(nvmlEventSet_t);
};

namespace {

template <typename F>
bool bind(void *lib, const char *sym, F &out, bool required, std::string &missing)
{
	out = reinterpret_cast<F>(::dlsym(lib, sym));
	if (!out && required)
		missing += missing.empty() ? sym : std::string(", ") + sym;
	return out != nullptr;
}

} // namespace

expected<std::unique_ptr<NvmlSession>> NvmlSession::open(const std::string &library)
{
	std::string name = library.empty() ? "libnvidia-ml.so.1" : library;
	void *lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = ::dlerror();
		return unexpected("nvml", std::string("NVML not available: ") + (e ? e : name));
	}
	std::unique_ptr<NvmlSession> s(new NvmlSession());
	s->lib_ = lib;
	s->api_ = std::make_unique<Api>();
	Api &a = *s->api_;
	std::string missing;
	bind(lib, "nvmlInit_v2", a.init, true, missing);
	bind(lib, "nvmlShutdown", a.shutdown, true, missing);
	bind(lib, "nvmlErrorString", a.error_string, true, missing);
	bind(lib, "nvmlSystemGetDriverVersion", a.driver_version, false, missing);
	bind(lib, "nvmlDeviceGetCount_v2", a.count, true, missing);
	bind(lib, "nvmlDeviceGetHandleByIndex_v2", a.by_index, true, missing);
	bind(lib, "nvmlDeviceGetPciInfo_v3", a.pci, true, missing);
	bind(lib, "nvmlDeviceGetUUID", a.uuid, true, missing);
	bind(lib, "nvmlDeviceGetName", a.name, false, missing);
	bind(lib, "nvmlDeviceGetMinorNumber", a.minor, false, missing);
	bind(lib, "nvmlDeviceGetTemperature", a.temperature, false, missing);
	bind(lib, "nvmlDeviceGetPowerUsage", a.power, false, missing);
	bind(lib, "nvmlDeviceGetEnforcedPowerLimit", a.power_limit, false, missing);
	bind(lib, "nvmlDeviceGetClockInfo", a.clock, false, missing);
	bind(lib, "nvmlDeviceGetMaxClockInfo", a.max_clock, false, missing);
	bind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", a.throttle, false, missing);
	bind(lib, "nvmlDeviceGetTotalEccErrors", a.ecc_total, false, missing);
	bind(lib, "nvmlDeviceGetMemoryErrorCounter", a.mem_errors, false, missing);
	bind(lib, "nvmlDeviceGetRetiredPages", a.retired, false, missing);
	bind(lib, "nvmlDeviceGetRetiredPagesPendingStatus", a.retired_pending, false, missing);
	bind(lib, "nvmlDeviceGetRemappedRows", a.remapped, false, missing);
	bind(lib, "nvmlDeviceGetPcieReplayCounter", a.replays, false, missing);
	bind(lib, "nvmlDeviceGetNvLinkState", a.nvlink_state, false, missing);
	bind(lib, "nvmlDeviceGetNvLinkErrorCounter", a.nvlink_errors, false, missing);
	bind(lib, "nvmlEventSetCreate", a.event_set_create, false, missing);
	bind(lib, "nvmlDeviceRegisterEvents", a.register_events, false, missing);
	bind(lib, "nvmlEventSetWait_v2", a.event_wait, false, missing);
	bind(lib, "nvmlEventSetFree", a.event_set_free, false, missing);
	if (!missing.empty()) {
		::dlclose(lib);
		s->lib_ = nullptr;
		return unexpected("nvml", name + " lacks " + missing);
	}
	nvmlReturn_t rc = a.init();
	if (rc != NVML_SUCCESS) {
		std::string why = a.error_string(rc);
		::dlclose(lib);
		s->lib_ = nullptr;
		return unexpected("nvml", "nvmlInit failed: " + why);
	}
	char ver[96] = {};
	if (a.driver_version && a.driver_version(ver, sizeof(ver)) == NVML_SUCCESS)
		s->driver_ = ver;
	return s;
}

NvmlSession::~NvmlSession()
{
	if (!lib_)
		return;
	if (events_ && api_->event_set_free)
		api_->event_set_free(static_cast<nvmlEventSet_t>(events_));
	api_->shutdown();
	::dlclose(lib_);
}

expected<std::vector<GpuState>> NvmlSession::gpus()
{
	Api &a = *api_;
	unsigned n = 0;
	if (nvmlReturn_t rc = a.count(&n); rc != NVML_SUCCESS)
		return unexpected("nvml", std::string("nvmlDeviceGetCount: ") + a.error_string(rc));
	std::vector<GpuState> out;
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d = nullptr;
		if (nvmlReturn_t rc = a.by_index(i, &d); rc != NVML_SUCCESS)
			return unexpected("nvml: GPU " + std::to_string(i), a.error_string(rc));
		GpuState g;
		g.index = static_cast<int>(i);
		nvmlPciInfo_t pci{};
		if (nvmlReturn_t rc = a.pci(d, &pci); rc != NVML_SUCCESS)
			return unexpected("nvml: GPU " + std::to_string(i), std::string("PCI info: ") + a.error_string(rc));
		g.pci_bus = normalize_pci(pci.busId);
		char buf[128] = {};
		if (a.uuid(d, buf, sizeof(buf)) == NVML_SUCCESS)
			g.uuid = buf;
		if (a.name && a.name(d, buf, sizeof(buf)) == NVML_SUCCESS)
			g.name = buf;
		unsigned u = 0, u2 = 0, u3 = 0, u4 = 0;
		if (a.minor && a.minor(d, &u) == NVML_SUCCESS)
			g.index = static_cast<int>(u);
		if (a.temperature && a.temperature(d, NVML_TEMPERATURE_GPU, &u) == NVML_SUCCESS)
			g.temp_c = u;
		if (a.power && a.power(d, &u) == NVML_SUCCESS)
			g.power_w = u / 1000.0;
		if (a.power_limit && a.power_limit(d, &u) == NVML_SUCCESS)
			g.power_limit_w = u / 1000.0;
		if (a.clock && a.clock(d, NVML_CLOCK_SM, &u) == NVML_SUCCESS)
			g.sm_clock_mhz = u;
		if (a.max_clock && a.max_clock(d, NVML_CLOCK_SM, &u) == NVML_SUCCESS)
			g.max_sm_clock_mhz = u;
		unsigned long long reasons = 0;
		if (a.throttle && a.throttle(d, &reasons) == NVML_SUCCESS) {
			g.sw_power_cap = reasons & 0x4;
			g.hw_slowdown = reasons & 0x8;
			g.sw_thermal_slowdown = reasons & 0x20;
			g.hw_thermal_slowdown = reasons & 0x40;
			g.hw_power_brake = reasons & 0x80;
		}
		// ECC: totals per (corrected|uncorrected, volatile|aggregate); DRAM
		// (device memory, location 2) separately, SRAM is the rest.
		auto ecc = [&](unsigned type, unsigned counter, Count &sram, Count &dram) {
			unsigned long long total = 0, dev = 0;
			if (!a.ecc_total || a.ecc_total(d, type, counter, &total) != NVML_SUCCESS)
				return;
			if (a.mem_errors && a.mem_errors(d, type, counter, 2, &dev) == NVML_SUCCESS && dev <= total) {
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
			nvmlReturn_t rc = a.retired(d, 0, &cnt, nullptr);
			if (rc == NVML_SUCCESS || rc == 7 /* insufficient size: count is set */)
				g.retired_sbe = cnt;
			cnt = 0;
			rc = a.retired(d, 1, &cnt, nullptr);
			if (rc == NVML_SUCCESS || rc == 7)
				g.retired_dbe = cnt;
		}
		if (a.retired_pending && a.retired_pending(d, &u) == NVML_SUCCESS)
			g.retired_pending = u != 0;
		if (a.remapped && a.remapped(d, &u, &u2, &u3, &u4) == NVML_SUCCESS) {
			g.remap_corr = u;
			g.remap_uncorr = u2;
			g.remap_pending = u3 != 0;
			g.remap_failure = u4 != 0;
		}
		if (a.replays && a.replays(d, &u) == NVML_SUCCESS)
			g.pcie_replays = u;
		if (a.nvlink_state) {
			for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
				unsigned on = 0;
				if (a.nvlink_state(d, l, &on) != NVML_SUCCESS)
					continue; // no such link on this GPU
				g.nvlink_reported = true;
				NvLinkState ls;
				ls.link = static_cast<int>(l);
				ls.active = on != 0;
				unsigned long long v = 0;
				if (a.nvlink_errors && a.nvlink_errors(d, l, 0, &v) == NVML_SUCCESS)
					ls.replay_errors = static_cast<int64_t>(v);
				if (a.nvlink_errors && a.nvlink_errors(d, l, 1, &v) == NVML_SUCCESS)
					ls.recovery_errors = static_cast<int64_t>(v);
				if (a.nvlink_errors && a.nvlink_errors(d, l, 2, &v) == NVML_SUCCESS)
					ls.crc_errors = static_cast<int64_t>(v);
				g.nvlinks.push_back(ls);
			}
		}
		out.push_back(std::move(g));
	}
	return out;
}

status NvmlSession::watch_xids()
{
	Api &a = *api_;
	if (!a.event_set_create || !a.register_events || !a.event_wait)
		return unexpected("nvml", "this NVML has no event API");
	nvmlEventSet_t set = nullptr;
	if (nvmlReturn_t rc = a.event_set_create(&set); rc != NVML_SUCCESS)
		return unexpected("nvml", std::string("nvmlEventSetCreate: ") + a.error_string(rc));
	events_ = set;
	unsigned n = 0;
	if (a.count(&n) != NVML_SUCCESS)
		return unexpected("nvml", "nvmlDeviceGetCount failed");
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d = nullptr;
		if (a.by_index(i, &d) != NVML_SUCCESS)
			continue;
		nvmlReturn_t rc = a.register_events(d, nvmlEventTypeXidCriticalError, set);
		if (rc != NVML_SUCCESS)
			log_debug("nvml: GPU %u: Xid events not supported: %s", i, a.error_string(rc));
	}
	return ok();
}

expected<std::vector<XidEvent>> NvmlSession::take_xids(unsigned timeout_ms)
{
	std::vector<XidEvent> out;
	if (!events_)
		return unexpected("nvml", "take_xids without watch_xids");
	Api &a = *api_;
	for (int guard = 0; guard < 10000; guard++) {
		nvmlEventData_t ev{};
		nvmlReturn_t rc = a.event_wait(static_cast<nvmlEventSet_t>(events_), &ev, guard == 0 ? timeout_ms : 0);
		if (rc == NVML_ERROR_TIMEOUT)
			break;
		if (rc != NVML_SUCCESS)
			return unexpected("nvml", std::string("nvmlEventSetWait: ") + a.error_string(rc));
		XidEvent x;
		x.xid = static_cast<int>(ev.eventData);
		nvmlPciInfo_t pci{};
		if (ev.device && a.pci(ev.device, &pci) == NVML_SUCCESS)
			x.pci_bus = normalize_pci(pci.busId);
		x.message = "reported by NVML's event API";
		out.push_back(std::move(x));
	}
	return out;
}

} // namespace loom::health
