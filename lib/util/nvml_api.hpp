// The NVML C interface as loom uses it, declared once for every caller
// (lib/topo's discovery, lib/health's collector): nvml.h is not needed to
// build, and libnvidia-ml is opened with dlopen at run time, so that a
// controller or a machine without NVIDIA drivers loads every loom binary.
// The types and constants are NVML's (nvml.h, ABI of the _v2/_v3 calls named
// in Api); a symbol the library lacks stays null and the caller decides
// whether it can do without it.
#pragma once

#include "lib/util/expected.hpp"

#include <initializer_list>
#include <memory>
#include <set>
#include <string>

namespace loom::nvml {

using Return = int;
using Device = struct nvmlDevice_st *;
using EventSet = struct nvmlEventSet_st *;
using EnableState = int; // nvmlEnableState_t: 0 disabled, 1 enabled

inline constexpr Return success = 0;
inline constexpr Return error_insufficient_size = 7;
inline constexpr Return error_timeout = 10;
inline constexpr unsigned temperature_gpu = 0;
inline constexpr unsigned clock_sm = 1;
inline constexpr unsigned max_links = 18; // NVML_NVLINK_MAX_LINKS
inline constexpr unsigned long long event_xid_critical = 0x8ULL;

struct PciInfo {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
};
struct Memory {
	unsigned long long total, free, used;
};
struct GpuFabricInfo {
	unsigned char clusterUuid[16];
	Return status;
	unsigned int cliqueId;
	unsigned char state;
};
struct EventData {
	Device device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
};

// The calls, each named for its NVML symbol in Library::open.
struct Api {
	Return (*init)() = nullptr;                           // nvmlInit_v2
	Return (*shutdown)() = nullptr;                       // nvmlShutdown
	const char *(*error_string)(Return) = nullptr;        // nvmlErrorString
	Return (*driver_version)(char *, unsigned) = nullptr; // nvmlSystemGetDriverVersion
	Return (*count)(unsigned *) = nullptr;                // nvmlDeviceGetCount_v2
	Return (*by_index)(unsigned, Device *) = nullptr;     // nvmlDeviceGetHandleByIndex_v2
	Return (*pci)(Device, PciInfo *) = nullptr;           // nvmlDeviceGetPciInfo_v3
	Return (*uuid)(Device, char *, unsigned) = nullptr;   // nvmlDeviceGetUUID
	Return (*name)(Device, char *, unsigned) = nullptr;   // nvmlDeviceGetName
	Return (*minor)(Device, unsigned *) = nullptr;        // nvmlDeviceGetMinorNumber
	Return (*memory)(Device, Memory *) = nullptr;         // nvmlDeviceGetMemoryInfo
	Return (*temperature)(Device, unsigned, unsigned *) = nullptr;
	Return (*power)(Device, unsigned *) = nullptr;               // nvmlDeviceGetPowerUsage
	Return (*power_limit)(Device, unsigned *) = nullptr;         // nvmlDeviceGetEnforcedPowerLimit
	Return (*clock)(Device, unsigned, unsigned *) = nullptr;     // nvmlDeviceGetClockInfo
	Return (*max_clock)(Device, unsigned, unsigned *) = nullptr; // nvmlDeviceGetMaxClockInfo
	Return (*throttle)(Device, unsigned long long *) = nullptr;  // ...CurrentClocksThrottleReasons
	Return (*ecc_total)(Device, unsigned, unsigned, unsigned long long *) = nullptr;
	Return (*mem_errors)(Device, unsigned, unsigned, unsigned, unsigned long long *) = nullptr;
	Return (*retired)(Device, unsigned, unsigned *, unsigned long long *) = nullptr;
	Return (*retired_pending)(Device, unsigned *) = nullptr;
	Return (*remapped)(Device, unsigned *, unsigned *, unsigned *, unsigned *) = nullptr;
	Return (*replays)(Device, unsigned *) = nullptr; // nvmlDeviceGetPcieReplayCounter
	Return (*nvlink_state)(Device, unsigned, EnableState *) = nullptr;
	Return (*nvlink_remote)(Device, unsigned, PciInfo *) = nullptr; // ...NvLinkRemotePciInfo_v2
	Return (*nvlink_errors)(Device, unsigned, unsigned, unsigned long long *) = nullptr;
	Return (*fabric)(Device, GpuFabricInfo *) = nullptr; // nvmlDeviceGetGpuFabricInfo
	Return (*event_set_create)(EventSet *) = nullptr;
	Return (*register_events)(Device, unsigned long long, EventSet) = nullptr;
	Return (*event_wait)(EventSet, EventData *, unsigned) = nullptr; // nvmlEventSetWait_v2
	Return (*event_set_free)(EventSet) = nullptr;
};

class Library {
public:
	// dlopen(name) (default libnvidia-ml.so.1) and look up every call of Api.
	// Error: "NVML not available: <dlerror>".
	static expected<std::unique_ptr<Library>> open(const std::string &name = {});
	~Library();
	Library(const Library &) = delete;
	Library &operator=(const Library &) = delete;

	const Api &api() const { return api_; }
	const std::string &name() const { return name_; }
	// The symbols of 'symbols' this library lacks, ", "-separated ("" when none).
	std::string lacking(std::initializer_list<const char *> symbols) const;
	// NVML's text for an error code (the code itself without nvmlErrorString).
	std::string error(Return rc) const;

private:
	Library() = default;
	void *handle_ = nullptr;
	std::string name_;
	Api api_;
	std::set<std::string> absent_;
};

} // namespace loom::nvml
