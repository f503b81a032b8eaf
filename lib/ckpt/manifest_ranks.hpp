// loom ckpt, internal to manifest*.cpp: the pieces the reader and writer of
// "loom-ckpt/1" (manifest.cpp) and of the parts of "loom-ckpt/2"
// (manifest_ranks.cpp) share.
#pragma once

#include "lib/ckpt/manifest.hpp"
#include "lib/util/json.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace loom::ckpt::detail {

// A file object at JSON path 'path'; its path must start with 'prefix'
// (layout "ranks": "rank-<r>/").
expected<FileEntry> read_file_entry(json_object *o, const std::string &path, std::string_view prefix = {});
// The fields of a loom-ckpt/2 manifest after section 2's (layout, ranks),
// checked in the protocol's order; sets m.layout, m.ranks and m.files (every
// part's files).
status read_ranks(ObjectReader &r, Manifest &m);
Json files_json(const std::vector<FileEntry> &files);
Json part_json(const RankPart &p);

} // namespace loom::ckpt::detail
