// loom: fail-closed key=value configuration.
//
// One parser for plugstack.conf plugin arguments ("key=value" words), slurm.conf
// PluginParams-style strings and loom's own config files (one or more key=value
// per line, '#' comments). A schema lists every key with its type and bounds;
// an unknown key, a repeated key, a missing '=' or a value that does not parse
// is an error naming where (file:line or "argument N"), the key and the value.
// Parse into a fresh options struct and adopt it only on success: on error the
// targets may hold part of the input, and the caller throws them away.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom {

// "90", "90s", "15m"/"15min", "2h", "1d", "1h30m", "01:30:00" -> seconds.
expected<int64_t> parse_duration(std::string_view text);
// "512", "4k", "1M", "2G", "1T" (powers of 1024, optional trailing 'B'/"iB") -> bytes.
expected<uint64_t> parse_size(std::string_view text);
// Whole decimal integer with no trailing garbage, within [min, max].
expected<int64_t> parse_int(std::string_view text, int64_t min, int64_t max);
// A finite decimal number with no trailing garbage, within [min, max]
// ("expected a number from MIN to MAX").
expected<double> parse_real(std::string_view text, double min, double max);
// yes/no, true/false, on/off, 1/0.
expected<bool> parse_bool(std::string_view text);
// Human form of a duration: 5400 -> "1h30m".
std::string format_duration(int64_t seconds);

class ConfigSchema {
public:
	// A setter validates and stores one value; it returns an Error with a
	// message such as "expected a duration" (the parser adds where and key).
	using Setter = std::function<status(std::string_view value)>;
	// The value a key holds now, as text (durations in seconds, sizes in
	// bytes, booleans yes/no, lists comma-joined): the typed keys below have
	// one, so a program's defaults can be listed and checked against its
	// man page.
	using Show = std::function<std::string()>;

	ConfigSchema &add(std::string key, std::string help, Setter setter, Show show = {});

	ConfigSchema &string(std::string key, std::string *out, std::string help = {});
	ConfigSchema &integer(std::string key, int64_t *out, int64_t min, int64_t max, std::string help = {});
	ConfigSchema &real(std::string key, double *out, double min, double max, std::string help = {});
	ConfigSchema &boolean(std::string key, bool *out, std::string help = {});
	ConfigSchema &duration(std::string key, int64_t *out_seconds, int64_t min, int64_t max, std::string help = {});
	ConfigSchema &size(std::string key, uint64_t *out_bytes, std::string help = {});
	ConfigSchema &choice(std::string key, std::string *out, std::vector<std::string> allowed,
			     std::string help = {});
	// Comma-separated list of non-empty words.
	ConfigSchema &list(std::string key, std::vector<std::string> *out, std::string help = {});
	// A family of keys "PREFIX.NAME" ("gpu_class.h100"): the setter gets NAME
	// (letters, digits, '-', '_'; never empty) and the value. Each full key at
	// most once, as any other.
	using NamedSetter = std::function<status(std::string_view name, std::string_view value)>;
	ConfigSchema &prefix(std::string prefix, std::string help, NamedSetter setter);

	// Plugin arguments as Slurm passes them (argv of "key=value" words).
	status parse_args(int argc, char *const argv[], const std::string &where) const;
	// Whitespace-separated key=value words (one slurm.conf parameter value).
	status parse_words(std::string_view text, const std::string &where) const;
	// A file: blank lines and '#' comments ignored, key=value words per line.
	status parse_file(const std::string &path) const;
	// The same, from text already in memory; 'name' is used in messages.
	status parse_text(std::string_view text, const std::string &name) const;

	// "key  help" lines, for --help and man pages.
	std::string describe() const;
	// {key, value now} of every key that can show its value, in the order
	// added; read before parsing, these are the defaults.
	std::vector<std::pair<std::string, std::string>> values() const;
	bool has_key(const std::string &key) const { return keys_.count(key) != 0; }

private:
	struct Key {
		std::string help;
		Setter setter;
		Show show;
	};
	struct Word {
		std::string where, key, value;
	};
	status apply(const std::vector<Word> &words) const;
	static status split_word(std::string_view word, const std::string &where, std::vector<Word> &out);

	std::map<std::string, Key> keys_;
	std::vector<std::string> order_;
	struct Prefix {
		std::string prefix, help;
		NamedSetter setter;
	};
	std::vector<Prefix> prefixes_;
};

} // namespace loom
