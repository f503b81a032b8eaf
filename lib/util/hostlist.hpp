// Slurm hostlist expressions ("gpu[001-016,020],login1").
#pragma once

#include "lib/util/expected.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace loom {

// Expand a hostlist. Several bracket groups in one name multiply out
// ("r[1-2]n[1-2]" gives r1n1 r1n2 r2n1 r2n2); zero padding follows the lower
// bound ("n[08-10]" gives n08 n09 n10). More than max_names names, unbalanced
// brackets, empty names or bad ranges are errors.
expected<std::vector<std::string>> hostlist_expand(std::string_view expr, size_t max_names = 1u << 20);

// The shortest usual form: names with a common prefix and numeric suffix of
// equal width fold into ranges ("n01,n02,n03,x" -> "n[01-03],x"). Order of
// first appearance of each prefix is kept.
std::string hostlist_compress(const std::vector<std::string> &names);

} // namespace loom
