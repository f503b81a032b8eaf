#include "lib/health/nvidia_smi.hpp"

#include "lib/health/host_sysfs.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include <cctype>
#include <cstdlib>
#include <map>

namespace loom::health {
namespace {

using Fields = std::map<std::string, std::string>; // "Temperature/GPU Current Temp" -> "29 C"

Count count_of(const Fields &f, const std::string &key)
{
	auto it = f.find(key);
	if (it == f.end())
		return std::nullopt;
	std::string_view v = trim(it->second);
	size_t n = 0;
	while (n < v.size() && std::isdigit(static_cast<unsigned char>(v[n])))
		n++;
	if (n == 0 || n > 18)
		return std::nullopt;
	return std::strtoll(std::string(v.substr(0, n)).c_str(), nullptr, 10);
}

Reading reading_of(const Fields &f, const std::string &key)
{
	auto it = f.find(key);
	if (it == f.end())
		return std::nullopt;
	std::string v(trim(it->second));
	if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-'))
		return std::nullopt;
	char *end = nullptr;
	double d = std::strtod(v.c_str(), &end);
	if (end == v.c_str())
		return std::nullopt;
	return d;
}

std::optional<bool> yes_no(const Fields &f, const std::string &key)
{
	auto it = f.find(key);
	if (it == f.end())
		return std::nullopt;
	if (it->second == "Yes")
		return true;
	if (it->second == "No")
		return false;
	return std::nullopt;
}

bool active(const Fields &f, const std::string &key)
{
	auto it = f.find(key);
	return it != f.end() && it->second == "Active";
}

std::string text_of(const Fields &f, const std::string &key)
{
	auto it = f.find(key);
	return it == f.end() || it->second == "N/A" ? std::string() : it->second;
}

GpuState to_gpu(const std::string &bus, const Fields &f, int order)
{
	GpuState g;
	g.pci_bus = normalize_pci(bus);
	Count minor = count_of(f, "Minor Number");
	g.index = minor ? static_cast<int>(*minor) : order;
	g.uuid = text_of(f, "GPU UUID");
	g.name = text_of(f, "Product Name");
	g.serial = text_of(f, "Serial Number");
	g.temp_c = reading_of(f, "Temperature/GPU Current Temp");
	g.mem_temp_c = reading_of(f, "Temperature/Memory Current Temp");
	g.slowdown_temp_c = reading_of(f, "Temperature/GPU Slowdown Temp");
	g.power_w = reading_of(f, "GPU Power Readings/Power Draw");
	if (!g.power_w)
		g.power_w = reading_of(f, "Power Readings/Power Draw");
	g.power_limit_w = reading_of(f, "GPU Power Readings/Current Power Limit");
	if (!g.power_limit_w)
		g.power_limit_w = reading_of(f, "Power Readings/Power Limit");
	g.sm_clock_mhz = count_of(f, "Clocks/SM");
	g.max_sm_clock_mhz = count_of(f, "Max Clocks/SM");
	for (const char *sec : {"Clocks Event Reasons/", "Clocks Throttle Reasons/"}) {
		std::string s = sec;
		g.hw_slowdown |= active(f, s + "HW Slowdown");
		g.hw_thermal_slowdown |= active(f, s + "HW Slowdown/HW Thermal Slowdown");
		g.hw_power_brake |= active(f, s + "HW Slowdown/HW Power Brake Slowdown");
		g.sw_thermal_slowdown |= active(f, s + "SW Thermal Slowdown");
		g.sw_power_cap |= active(f, s + "SW Power Cap");
	}
	const std::string v = "ECC Errors/Volatile/", a = "ECC Errors/Aggregate/";
	g.ecc_vol_sram_corr = count_of(f, v + "SRAM Correctable");
	g.ecc_vol_sram_uncorr = count_of(f, v + "SRAM Uncorrectable");
	if (!g.ecc_vol_sram_uncorr) {
		// 535+ splits SRAM uncorrectable into parity and SEC-DED.
		Count p = count_of(f, v + "SRAM Uncorrectable Parity"),
		      s = count_of(f, v + "SRAM Uncorrectable SEC-DED");
		if (p || s)
			g.ecc_vol_sram_uncorr = p.value_or(0) + s.value_or(0);
	}
	g.ecc_vol_dram_corr = count_of(f, v + "DRAM Correctable");
	g.ecc_vol_dram_uncorr = count_of(f, v + "DRAM Uncorrectable");
	g.ecc_agg_sram_corr = count_of(f, a + "SRAM Correctable");
	g.ecc_agg_sram_uncorr = count_of(f, a + "SRAM Uncorrectable");
	if (!g.ecc_agg_sram_uncorr) {
		Count p = count_of(f, a + "SRAM Uncorrectable Parity"),
		      s = count_of(f, a + "SRAM Uncorrectable SEC-DED");
		if (p || s)
			g.ecc_agg_sram_uncorr = p.value_or(0) + s.value_or(0);
	}
	g.ecc_agg_dram_corr = count_of(f, a + "DRAM Correctable");
	g.ecc_agg_dram_uncorr = count_of(f, a + "DRAM Uncorrectable");
	g.retired_sbe = count_of(f, "Retired Pages/Single Bit ECC");
	g.retired_dbe = count_of(f, "Retired Pages/Double Bit ECC");
	g.retired_pending = yes_no(f, "Retired Pages/Pending Page Blacklist");
	if (!g.retired_pending)
		g.retired_pending = yes_no(f, "Retired Pages/Pending Page Retirement");
	g.remap_corr = count_of(f, "Remapped Rows/Correctable Error");
	g.remap_uncorr = count_of(f, "Remapped Rows/Uncorrectable Error");
	g.remap_pending = yes_no(f, "Remapped Rows/Pending");
	g.remap_failure = yes_no(f, "Remapped Rows/Remapping Failure Occurred");
	g.reset_required = yes_no(f, "GPU Reset Status/Reset Required");
	g.pcie_replays = count_of(f, "PCI/Replays Since Reset");
	return g;
}

} // namespace

expected<NvidiaSmiReport> parse_nvidia_smi_q(std::string_view text, const std::string &source)
{
	NvidiaSmiReport rep;
	std::vector<std::pair<size_t, std::string>> stack; // (indent, section name) inside a GPU
	std::string bus;
	Fields fields;
	bool in_gpu = false;
	int lineno = 0;
	auto flush = [&]() -> status {
		if (!in_gpu)
			return ok();
		GpuState g = to_gpu(bus, fields, static_cast<int>(rep.gpus.size()));
		if (g.pci_bus.empty())
			return unexpected(source, "GPU block '" + bus + "' has no valid PCI bus id");
		rep.gpus.push_back(std::move(g));
		fields.clear();
		stack.clear();
		return ok();
	};
	for (const std::string &raw : split_lines(text)) {
		lineno++;
		std::string_view line = raw;
		if (trim(line).empty() || line.find("=====") != std::string_view::npos)
			continue;
		size_t indent = 0;
		while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t'))
			indent++;
		std::string_view body = line.substr(indent);
		size_t colon = body.find(" : ");
		std::string key(trim(colon == std::string_view::npos ? body : body.substr(0, colon)));
		std::string value =
			colon == std::string_view::npos ? std::string() : std::string(trim(body.substr(colon + 3)));
		if (indent == 0) {
			if (key.rfind("GPU ", 0) == 0 && colon == std::string_view::npos) {
				if (auto st = flush(); !st)
					return unexpected(st.error());
				in_gpu = true;
				bus = key.substr(4);
				continue;
			}
			if (in_gpu && colon == std::string_view::npos)
				continue; // stray top-level text
			if (key == "Driver Version")
				rep.driver_version = value;
			else if (key == "CUDA Version")
				rep.cuda_version = value;
			else if (key == "Attached GPUs") {
				auto n = parse_int(value, 0, 4096);
				if (!n)
					return unexpected(source + ":" + std::to_string(lineno),
							  "bad 'Attached GPUs' value '" + value + "'");
				rep.attached = static_cast<int>(*n);
			}
			continue;
		}
		if (!in_gpu)
			continue;
		while (!stack.empty() && stack.back().first >= indent)
			stack.pop_back();
		std::string path;
		for (const auto &s : stack)
			path += s.second + "/";
		path += key;
		if (colon == std::string_view::npos) {
			stack.emplace_back(indent, key);
			continue;
		}
		fields.emplace(path, value);
		// A key with a value can also head a subsection ("HW Slowdown : Active"
		// above "HW Thermal Slowdown").
		stack.emplace_back(indent, key);
	}
	if (auto st = flush(); !st)
		return unexpected(st.error());
	if (rep.attached >= 0 && static_cast<size_t>(rep.attached) != rep.gpus.size())
		return unexpected(source, "cut short: " + std::to_string(rep.attached) + " GPUs attached but " +
						  std::to_string(rep.gpus.size()) + " described");
	return rep;
}

expected<size_t> parse_nvlink_status(std::string_view text, const std::string &source, std::vector<GpuState> &gpus)
{
	GpuState *cur = nullptr;
	size_t links = 0;
	int lineno = 0;
	for (const std::string &raw : split_lines(text)) {
		lineno++;
		std::string_view line = trim(raw);
		if (line.empty())
			continue;
		if (line.rfind("GPU ", 0) == 0) {
			size_t colon = line.find(':');
			auto idx = parse_int(line.substr(4, colon == std::string_view::npos ? 0 : colon - 4), 0, 4095);
			if (!idx)
				return unexpected(source + ":" + std::to_string(lineno), "bad GPU line");
			cur = nullptr;
			for (auto &g : gpus)
				if (g.index == *idx)
					cur = &g;
			if (!cur) {
				GpuState g;
				g.index = static_cast<int>(*idx);
				size_t u = line.find("(UUID: ");
				if (u != std::string_view::npos)
					g.uuid = std::string(line.substr(u + 7, line.find(')', u) - u - 7));
				gpus.push_back(std::move(g));
				cur = &gpus.back();
			}
			cur->nvlinks.clear();
			cur->nvlink_reported = true;
			continue;
		}
		if (!cur)
			continue;
		if (line.find("all links are inactive") != std::string_view::npos)
			continue; // no active link: nvlinks stays empty, which rules read as "none up"
		if (line.rfind("Link ", 0) == 0) {
			size_t colon = line.find(':');
			if (colon == std::string_view::npos)
				return unexpected(source + ":" + std::to_string(lineno), "bad link line");
			auto n = parse_int(trim(line.substr(5, colon - 5)), 0, 1023);
			if (!n)
				return unexpected(source + ":" + std::to_string(lineno), "bad link number");
			NvLinkState l;
			l.link = static_cast<int>(*n);
			std::string_view rest = trim(line.substr(colon + 1));
			l.active = rest.find("inactive") == std::string_view::npos && !rest.empty();
			cur->nvlinks.push_back(l);
			links++;
		}
	}
	return links;
}

expected<NvidiaSmiReport> read_nvidia_smi_q(const std::string &path)
{
	auto text = read_collector_file(path, nvidia_smi_max_bytes);
	if (!text)
		return unexpected(text.error());
	return parse_nvidia_smi_q(*text, path);
}

expected<size_t> read_nvlink_status(const std::string &path, std::vector<GpuState> &gpus)
{
	auto text = read_collector_file(path, nvidia_smi_max_bytes);
	if (!text)
		return unexpected(text.error());
	return parse_nvlink_status(*text, path, gpus);
}

} // namespace loom::health
