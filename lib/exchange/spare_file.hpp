// loom exchange: the spare pool file.
//
// select/topo computes the spare pool (lib/place/spares.hpp) and writes it,
// whenever it changes, to StateSaveLocation/loom-spares.json (spare_file=
// in loom-topo.conf; place::spare_file_of). jobcomp/health (the replacement
// of failed nodes: lib/health/spares.hpp) and `loom place --spares` read it.
// The file:
//
//   {"format": "loom-spares/1", "written": 1764800000, "lend_max_s": 1800,
//    "domains": [{"kind": "leaf", "name": "leaf1", "nodes": "n[1-4]",
//                 "want": 1, "spares": "n4"}, ...]}
//
// nodes and spares are Slurm hostlists; domains come rule by rule, in the
// order of spares= (so the first domain holding a node is its tightest).
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::exchange {

constexpr const char *spare_file_format = "loom-spares/1";

struct SpareFile {
	struct Domain {
		std::string kind, name;
		std::vector<std::string> nodes, spares;
		int want = 0;
	};
	int64_t written = 0;
	int64_t lend_max_s = 0;
	std::vector<Domain> domains;
};

std::string spare_file_json(const SpareFile &f);
// Strict: an unknown field, a bad hostlist or a spare outside its domain is
// an error naming the JSON path.
expected<SpareFile> parse_spare_file(std::string_view text, const std::string &source);
expected<SpareFile> read_spare_file(const std::string &path);

} // namespace loom::exchange
