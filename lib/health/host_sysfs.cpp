#include "lib/health/host_sysfs.hpp"

#include "lib/util/fs.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <dirent.h>

namespace loom::health {
namespace {

std::optional<std::string> value_at(const std::string &path)
{
	auto t = read_file(path, 1 << 16);
	if (!t)
		return std::nullopt;
	return std::string(trim(*t));
}

Count count_at(const std::string &path)
{
	auto v = value_at(path);
	if (!v || v->empty())
		return std::nullopt;
	char *end = nullptr;
	long long n = std::strtoll(v->c_str(), &end, 10);
	if (end == v->c_str() || *end != '\0')
		return std::nullopt;
	return n;
}

// hwmon scales: temp in millidegrees C, in* in millivolts, fan in RPM.
double scale_of(const std::string &kind) { return kind == "fan" ? 1.0 : 1000.0; }

} // namespace

expected<std::vector<HwmonSensor>> read_hwmon(const std::string &class_dir)
{
	std::vector<HwmonSensor> out;
	for (const auto &chip_dir : list_dir(class_dir)) {
		std::string base = path_join(class_dir, chip_dir);
		std::string chip = value_at(path_join(base, "name")).value_or(chip_dir);
		for (const auto &file : list_dir(base)) {
			// tempN_input, fanN_input, inN_input
			size_t us = file.find('_');
			if (us == std::string::npos || file.substr(us) != "_input")
				continue;
			std::string stem = file.substr(0, us); // temp1
			size_t digits = stem.find_first_of("0123456789");
			if (digits == std::string::npos)
				continue;
			std::string kind = stem.substr(0, digits);
			if (kind != "temp" && kind != "fan" && kind != "in")
				continue;
			Count raw = count_at(path_join(base, file));
			if (!raw)
				continue; // sensor present but not readable now
			double scale = scale_of(kind);
			HwmonSensor s;
			s.chip = chip;
			s.kind = kind;
			s.label = value_at(path_join(base, stem + "_label")).value_or(stem);
			s.value = static_cast<double>(*raw) / scale;
			auto opt = [&](const char *suffix) -> Reading {
				Count c = count_at(path_join(base, stem + suffix));
				return c ? Reading(static_cast<double>(*c) / scale) : std::nullopt;
			};
			s.crit = opt("_crit");
			s.max = opt("_max");
			s.min = opt("_min");
			for (const char *a : {"_alarm", "_crit_alarm", "_fault"})
				if (count_at(path_join(base, stem + a)).value_or(0) != 0)
					s.alarm = true;
			out.push_back(std::move(s));
		}
	}
	return out;
}

expected<std::vector<EdacController>> read_edac(const std::string &mc_dir)
{
	std::vector<EdacController> out;
	for (const auto &mc : list_dir(mc_dir)) {
		if (mc.rfind("mc", 0) != 0 || mc.size() < 3 || !std::isdigit(static_cast<unsigned char>(mc[2])))
			continue;
		EdacController c;
		c.name = mc;
		c.corrected = count_at(path_join(path_join(mc_dir, mc), "ce_count"));
		c.uncorrected = count_at(path_join(path_join(mc_dir, mc), "ue_count"));
		if (!c.corrected && !c.uncorrected)
			return unexpected(path_join(mc_dir, mc), "no readable ce_count or ue_count");
		out.push_back(std::move(c));
	}
	return out;
}

expected<std::vector<NetIface>> read_net(const std::string &class_dir, const std::vector<std::string> &skip)
{
	std::vector<NetIface> out;
	for (const auto &name : list_dir(class_dir)) {
		bool skipped = false;
		for (const auto &s : skip)
			skipped |= name.rfind(s, 0) == 0;
		if (skipped)
			continue;
		std::string base = path_join(class_dir, name);
		NetIface n;
		n.name = name;
		Count carrier = count_at(path_join(base, "carrier"));
		if (carrier)
			n.carrier = *carrier != 0;
		n.operstate = value_at(path_join(base, "operstate")).value_or("");
		n.carrier_changes = count_at(path_join(base, "carrier_changes"));
		n.rx_errors = count_at(path_join(base, "statistics/rx_errors"));
		n.tx_errors = count_at(path_join(base, "statistics/tx_errors"));
		n.rx_dropped = count_at(path_join(base, "statistics/rx_dropped"));
		out.push_back(std::move(n));
	}
	return out;
}

} // namespace loom::health
