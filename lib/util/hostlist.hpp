// Slurm hostlist expressions ("gpu[001-016,020],login1").
#pragma once

#include "lib/util/expected.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom {

// Expand a hostlist. Several bracket groups in one name multiply out
// ("r[1-2]n[1-2]" gives r1n1 r1n2 r2n1 r2n2); zero padding follows the lower
// bound ("n[08-10]" gives n08 n09 n10). More than max_names names, unbalanced
// brackets, empty names or bad ranges are errors.
// The names are counted before any is built, so a hostile range costs
// neither time nor memory.
expected<std::vector<std::string>> hostlist_expand(std::string_view expr, size_t max_names = 1u << 20);

// How many names a hostlist expands to (SIZE_MAX when past it), with the
// same checks as hostlist_expand and nothing built: a reader that checks a
// line's syntax, or what a whole file adds up to, without expanding it.
expected<size_t> hostlist_count(std::string_view expr);

// A file's hostlists, expanded against what the whole file may name: each
// expression within hostlist_expand's own limit still cannot add up, over many
// lines, to more than `max` names of that kind ("nodes", "switches").
class HostlistBudget {
public:
	HostlistBudget(size_t max, std::string what) : left_(max), max_(max), what_(std::move(what)) {}
	// The names of expr ("" gives none), drawn on the budget; past it, an
	// error that says the file as a whole names too many.
	expected<std::vector<std::string>> expand(std::string_view expr);

private:
	size_t left_, max_;
	std::string what_;
};

// The shortest usual form: names with a common prefix and numeric suffix of
// equal width fold into ranges ("n01,n02,n03,x" -> "n[01-03],x"). Order of
// first appearance of each prefix is kept.
std::string hostlist_compress(const std::vector<std::string> &names);

} // namespace loom
