#include "lib/util/nvml_api.hpp"

#include <dlfcn.h>

namespace loom::nvml {

namespace {

template <typename F>
void bind(void *handle, const char *symbol, F &out, std::set<std::string> &absent)
{
	out = reinterpret_cast<F>(::dlsym(handle, symbol));
	if (!out)
		absent.insert(symbol);
}

void bind_all(void *h, Api &a, std::set<std::string> &m)
{
	bind(h, "nvmlInit_v2", a.init, m);
	bind(h, "nvmlShutdown", a.shutdown, m);
	bind(h, "nvmlErrorString", a.error_string, m);
	bind(h, "nvmlSystemGetDriverVersion", a.driver_version, m);
	bind(h, "nvmlDeviceGetCount_v2", a.count, m);
	bind(h, "nvmlDeviceGetHandleByIndex_v2", a.by_index, m);
	bind(h, "nvmlDeviceGetPciInfo_v3", a.pci, m);
	bind(h, "nvmlDeviceGetUUID", a.uuid, m);
	bind(h, "nvmlDeviceGetName", a.name, m);
	bind(h, "nvmlDeviceGetMinorNumber", a.minor, m);
	bind(h, "nvmlDeviceGetMemoryInfo", a.memory, m);
	bind(h, "nvmlDeviceGetTemperature", a.temperature, m);
	bind(h, "nvmlDeviceGetPowerUsage", a.power, m);
	bind(h, "nvmlDeviceGetEnforcedPowerLimit", a.power_limit, m);
	bind(h, "nvmlDeviceGetClockInfo", a.clock, m);
	bind(h, "nvmlDeviceGetMaxClockInfo", a.max_clock, m);
	bind(h, "nvmlDeviceGetCurrentClocksThrottleReasons", a.throttle, m);
	bind(h, "nvmlDeviceGetTotalEccErrors", a.ecc_total, m);
	bind(h, "nvmlDeviceGetMemoryErrorCounter", a.mem_errors, m);
	bind(h, "nvmlDeviceGetRetiredPages", a.retired, m);
	bind(h, "nvmlDeviceGetRetiredPagesPendingStatus", a.retired_pending, m);
	bind(h, "nvmlDeviceGetRemappedRows", a.remapped, m);
	bind(h, "nvmlDeviceGetPcieReplayCounter", a.replays, m);
	bind(h, "nvmlDeviceGetNvLinkState", a.nvlink_state, m);
	bind(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2", a.nvlink_remote, m);
	bind(h, "nvmlDeviceGetNvLinkErrorCounter", a.nvlink_errors, m);
	bind(h, "nvmlDeviceGetGpuFabricInfo", a.fabric, m);
	bind(h, "nvmlEventSetCreate", a.event_set_create, m);
	bind(h, "nvmlDeviceRegisterEvents", a.register_events, m);
	bind(h, "nvmlEventSetWait_v2", a.event_wait, m);
	bind(h, "nvmlEventSetFree", a.event_set_free, m);
}

} // namespace

expected<std::unique_ptr<Library>> Library::open(const std::string &name)
{
	std::string file = name.empty() ? "libnvidia-ml.so.1" : name;
	void *h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = ::dlerror();
		return unexpected("nvml", std::string("NVML not available: ") + (e ? e : file));
	}
	std::unique_ptr<Library> lib(new Library());
	lib->handle_ = h;
	lib->name_ = file;
	bind_all(h, lib->api_, lib->absent_);
	return lib;
}

Library::~Library()
{
	if (handle_)
		::dlclose(handle_);
}

std::string Library::lacking(std::initializer_list<const char *> symbols) const
{
	std::string out;
	for (const char *s : symbols)
		if (absent_.count(s))
			out += (out.empty() ? "" : ", ") + std::string(s);
	return out;
}

std::string Library::error(Return rc) const
{
	const char *s = api_.error_string ? api_.error_string(rc) : nullptr;
	return s ? s : "NVML error " + std::to_string(rc);
}

} // namespace loom::nvml
