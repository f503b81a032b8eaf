// loom: RAII and strict reading over json-c.
//
// Json owns one reference to a json_object. ObjectReader reads the fields of
// one JSON object and, at finish(), refuses any field nobody asked for: the
// loom file formats are strict so that a typo is an error, not a silent default.
// Every error names the JSON path ($.nodes[3].gpus[0].index) of the bad value.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

struct json_object;

namespace loom {

class Json {
public:
	Json() = default;
	// Takes ownership of one reference.
	explicit Json(json_object *o) : o_(o) {}
	~Json();
	Json(const Json &other);
	Json &operator=(const Json &other);
	Json(Json &&other) noexcept : o_(std::exchange(other.o_, nullptr)) {}
	Json &operator=(Json &&other) noexcept;

	static Json object();
	static Json array();
	static Json string(std::string_view s);
	static Json integer(int64_t v);
	static Json number(double v);
	static Json boolean(bool v);

	json_object *get() const { return o_; }
	json_object *release() { return std::exchange(o_, nullptr); }
	explicit operator bool() const { return o_ != nullptr; }

	// Building: add a field to an object / an element to an array.
	Json &set(const char *key, Json value);
	Json &push(Json value);

	// Serialise: pretty (two-space indent) or compact, ending in a newline.
	std::string dump(bool pretty = true) const;

private:
	json_object *o_ = nullptr;
};

// Parse text; errors name 'source' and the line and column of the problem.
// max_depth bounds nesting (json-c default 32 is kept unless asked).
expected<Json> json_parse(std::string_view text, const std::string &source, int max_depth = 64);
// Read a file and parse it. Files larger than max_bytes are refused.
expected<Json> json_parse_file(const std::string &path, uint64_t max_bytes = 1ull << 30);

// Reads one JSON object strictly.
class ObjectReader {
public:
	ObjectReader(json_object *obj, std::string path);

	// False (with error()) when the value was not an object.
	bool ok() const { return ok_; }
	const Error &error() const { return err_; }
	const std::string &path() const { return path_; }

	bool has(const char *key) const;
	// Required fields: a missing or mistyped field is an error.
	expected<std::string> str(const char *key);
	expected<int64_t> integer(const char *key, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
	expected<double> number(const char *key);
	expected<bool> boolean(const char *key);
	// Object or array field, returned borrowed (valid while the parent lives).
	expected<json_object *> object(const char *key);
	expected<json_object *> array(const char *key);
	// Optional fields: absent gives the fallback; present but mistyped is an error.
	expected<std::string> str_or(const char *key, std::string fallback);
	expected<int64_t> integer_or(const char *key, int64_t fallback, int64_t min = INT64_MIN,
				     int64_t max = INT64_MAX);
	expected<double> number_or(const char *key, double fallback);
	expected<bool> boolean_or(const char *key, bool fallback);
	// Borrowed; nullptr when absent.
	expected<json_object *> array_or_null(const char *key);
	expected<json_object *> object_or_null(const char *key);

	// The path of a field or an array element, for messages.
	std::string field_path(const char *key) const { return path_ + "." + key; }
	static std::string index_path(const std::string &array_path, size_t i)
	{
		return array_path + "[" + std::to_string(i) + "]";
	}

	// Error for the first field that was never read.
	status finish() const;

private:
	expected<json_object *> field(const char *key, int type, const char *type_name);

	json_object *obj_;
	std::string path_;
	std::set<std::string> read_;
	bool ok_ = true;
	Error err_;
};

} // namespace loom
