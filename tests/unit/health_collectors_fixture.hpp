// The health collector tests' recordings: a file of tests/data/health as
// text, the recorded H100 node's nvidia-smi -q report; and the test case
// test_health_collectors's other source gives its suite. It includes
// check_main.hpp after the standard headers, as check.h must come.
#pragma once

#include "lib/health/nvidia_smi.hpp"
#include "lib/util/fs.hpp"

#include <string>

#include "tests/unit/check_main.hpp"

namespace loom::health::testing {

inline std::string recorded(const std::string &name)
{
	auto t = read_file(test::data("health/" + name));
	ck_assert_msg(t.has_value(), "%s", t ? "" : t.error().str().c_str());
	return *t;
}

inline NvidiaSmiReport h100()
{
	auto rep = parse_nvidia_smi_q(recorded("nvidia-smi-q-8xh100-535.161.08.txt"), "h100");
	ck_assert_msg(rep.has_value(), "%s", rep ? "" : rep.error().str().c_str());
	return *rep;
}

} // namespace loom::health::testing

// The devices' collectors: nvidia-smi, NVLink, InfiniBand, NVML and the GPU
// probe (test_health_collectors_devices.cpp).
TCase *health_device_collector_tests();
