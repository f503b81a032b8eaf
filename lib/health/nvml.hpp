// loom health: GPU state through NVML, loaded with dlopen at run time.
//
// libloom never links libnvidia-ml: a controller or a test machine without
// GPUs loads every loom binary, and this collector says "NVML not available"
// (an error the caller records) instead of pretending there are no faults.
// Xid events come through NVML's event API only for the time a session is
// open (NVML does not replay past events); the kernel log is the record of
// what happened before.
#pragma once

#include "lib/health/sample.hpp"
#include "lib/util/expected.hpp"

#include <memory>
#include <string>
#include <vector>

namespace loom::nvml {
class Library; // lib/util/nvml_api.hpp
}

namespace loom::health {

class NvmlSession {
public:
	// dlopen(library) and nvmlInit; library defaults to libnvidia-ml.so.1.
	static expected<std::unique_ptr<NvmlSession>> open(const std::string &library = {});
	~NvmlSession();
	NvmlSession(const NvmlSession &) = delete;
	NvmlSession &operator=(const NvmlSession &) = delete;

	// Every GPU's state. A GPU NVML cannot query at all is an error naming it
	// (an "Unknown Error"/GPU-lost device is a fault, not a missing GPU).
	expected<std::vector<GpuState>> gpus();
	// Start listening for Xid events on every GPU.
	status watch_xids();
	// Xid events delivered since watch_xids(), waiting at most timeout_ms for the first.
	expected<std::vector<XidEvent>> take_xids(unsigned timeout_ms);

	std::string driver_version() const { return driver_; }

private:
	NvmlSession() = default;
	std::unique_ptr<nvml::Library> lib_;
	void *events_ = nullptr;
	std::string driver_;
};

} // namespace loom::health
