// loom: small, careful file helpers shared by every part.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom {

// Whole file into memory; files larger than max_bytes are refused.
expected<std::string> read_file(const std::string &path, uint64_t max_bytes = 256ull << 20);
// Write text to path atomically: a temporary file beside it, fsync, rename,
// fsync of the directory. Readers see the old content or the new, never half.
status write_file_atomic(const std::string &path, std::string_view text, unsigned mode = 0644);
// Join path pieces with single slashes.
std::string path_join(std::string_view a, std::string_view b);
// Names in a directory, sorted, without '.'-prefixed entries; empty when the
// directory cannot be read.
std::vector<std::string> list_dir(const std::string &dir);
// Split text into lines (without the newline characters).
std::vector<std::string> split_lines(std::string_view text);
// Trim ASCII whitespace on both ends.
std::string_view trim(std::string_view s);
// Text from a file for a message: at most 'max' bytes, control and non-ASCII
// bytes as \xNN, so that what a user sees is what the file holds.
std::string shown(std::string_view s, size_t max = 40);
// ASCII lower case.
std::string lower(std::string_view s);
// The words with 'sep' between them.
std::string join(const std::vector<std::string> &words, std::string_view sep);

} // namespace loom
