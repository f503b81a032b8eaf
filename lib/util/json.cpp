#include "lib/util/json.hpp"

#include "lib/util/log.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <json-c/json.h>

namespace loom {

Json::~Json()
{
	if (o_)
		json_object_put(o_);
}

Json::Json(const Json &other) : o_(other.o_ ? json_object_get(other.o_) : nullptr) {}

Json &Json::operator=(const Json &other)
{
	if (this != &other) {
		json_object *n = other.o_ ? json_object_get(other.o_) : nullptr;
		if (o_)
			json_object_put(o_);
		o_ = n;
	}
	return *this;
}

Json &Json::operator=(Json &&other) noexcept
{
	if (this != &other) {
		if (o_)
			json_object_put(o_);
		o_ = std::exchange(other.o_, nullptr);
	}
	return *this;
}

Json Json::object() { return Json(json_object_new_object()); }
Json Json::array() { return Json(json_object_new_array()); }
Json Json::string(std::string_view s) { return Json(json_object_new_string_len(s.data(), static_cast<int>(s.size()))); }
Json Json::integer(int64_t v) { return Json(json_object_new_int64(v)); }
Json Json::number(double v)
{
	// 15 significant digits: every digit a double holds for certain, none of
	// the binary noise json-c's "%.17g" prints (0.0021719999999999999 for
	// 0.002172). A whole number keeps ".0": it reads back as a number.
	if (!std::isfinite(v))
		return Json(json_object_new_double(v));
	char buf[40];
	std::snprintf(buf, sizeof buf, "%.15g", v);
	if (!std::strpbrk(buf, ".eE"))
		std::strncat(buf, ".0", sizeof buf - std::strlen(buf) - 1);
	return Json(json_object_new_double_s(v, buf));
}
Json Json::boolean(bool v) { return Json(json_object_new_boolean(v)); }

Json &Json::set(const char *key, Json value)
{
	json_object_object_add(o_, key, value.release());
	return *this;
}

Json &Json::push(Json value)
{
	json_object_array_add(o_, value.release());
	return *this;
}

std::string Json::dump(bool pretty) const
{
	if (!o_)
		return "null\n";
	int flags = pretty ? (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED) : JSON_C_TO_STRING_PLAIN;
	flags |= JSON_C_TO_STRING_NOSLASHESCAPE;
	const char *s = json_object_to_json_string_ext(o_, flags);
	std::string out = s ? s : "null";
	if (pretty) {
		// json-c indents with two spaces already under PRETTY|SPACED; normalise
		// "key":value spacing is fine as is.
	}
	out += "\n";
	return out;
}

expected<Json> json_parse(std::string_view text, const std::string &source, int max_depth)
{
	json_tokener *tok = json_tokener_new_ex(max_depth);
	if (!tok)
		return unexpected(source, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *obj = json_tokener_parse_ex(tok, text.data(), static_cast<int>(text.size()));
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t offset = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (text.size() > static_cast<size_t>(INT32_MAX))
		return unexpected(source, "input too large");
	auto where = [&](size_t off) {
		size_t line = 1, col = 1;
		for (size_t i = 0; i < off && i < text.size(); i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else
				col++;
		}
		return source + ":" + std::to_string(line) + ":" + std::to_string(col);
	};
	if (jerr == json_tokener_continue || (jerr == json_tokener_success && !obj && text.empty()))
		return unexpected(where(text.size()), "unexpected end of input (truncated JSON?)");
	if (jerr != json_tokener_success) {
		if (obj)
			json_object_put(obj);
		return unexpected(where(offset), std::string("invalid JSON: ") + json_tokener_error_desc(jerr));
	}
	// Anything but whitespace after the value is an error.
	for (size_t i = offset; i < text.size(); i++) {
		if (!std::isspace(static_cast<unsigned char>(text[i]))) {
			json_object_put(obj);
			return unexpected(where(i), "trailing data after the JSON value");
		}
	}
	return Json(obj);
}

expected<Json> json_parse_file(const std::string &path, uint64_t max_bytes)
{
	FILE *f = std::fopen(path.c_str(), "rb");
	if (!f)
		return unexpected(path, std::string("cannot open: ") + std::strerror(errno));
	std::string data;
	char buf[65536];
	size_t n;
	while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
		data.append(buf, n);
		if (data.size() > max_bytes) {
			std::fclose(f);
			return unexpected(path, "file larger than " + std::to_string(max_bytes) + " bytes");
		}
	}
	bool err = std::ferror(f);
	std::fclose(f);
	if (err)
		return unexpected(path, "read error");
	return json_parse(data, path);
}

ObjectReader::ObjectReader(json_object *obj, std::string path) : obj_(obj), path_(std::move(path))
{
	if (!obj_ || json_object_get_type(obj_) != json_type_object) {
		ok_ = false;
		err_ = Error(path_, "expected an object");
	}
}

bool ObjectReader::has(const char *key) const
{
	json_object *v = nullptr;
	return ok_ && json_object_object_get_ex(obj_, key, &v);
}

expected<json_object *> ObjectReader::field(const char *key, int type, const char *type_name)
{
	if (!ok_)
		return unexpected(err_);
	json_object *v = nullptr;
	read_.insert(key);
	if (!json_object_object_get_ex(obj_, key, &v))
		return unexpected(path_, std::string("missing required field '") + key + "'");
	json_type t = json_object_get_type(v);
	bool match = t == type || (type == json_type_double && t == json_type_int);
	if (!match)
		return unexpected(field_path(key),
				  std::string("expected ") + type_name + ", found " + json_type_to_name(t));
	return v;
}

expected<std::string> ObjectReader::str(const char *key)
{
	auto v = field(key, json_type_string, "a string");
	if (!v)
		return unexpected(v.error());
	return std::string(json_object_get_string(*v), static_cast<size_t>(json_object_get_string_len(*v)));
}

expected<int64_t> ObjectReader::integer(const char *key, int64_t min, int64_t max)
{
	auto v = field(key, json_type_int, "an integer");
	if (!v)
		return unexpected(v.error());
	errno = 0;
	int64_t i = json_object_get_int64(*v);
	if (errno == ERANGE)
		return unexpected(field_path(key), "integer out of range");
	if (i < min || i > max)
		return unexpected(field_path(key),
				  strprintf("%lld is out of range [%lld, %lld]", static_cast<long long>(i),
					    static_cast<long long>(min), static_cast<long long>(max)));
	return i;
}

expected<double> ObjectReader::number(const char *key)
{
	auto v = field(key, json_type_double, "a number");
	if (!v)
		return unexpected(v.error());
	double d = json_object_get_double(*v);
	if (!std::isfinite(d))
		return unexpected(field_path(key), "not a finite number");
	return d;
}

expected<bool> ObjectReader::boolean(const char *key)
{
	auto v = field(key, json_type_boolean, "true or false");
	if (!v)
		return unexpected(v.error());
	return static_cast<bool>(json_object_get_boolean(*v));
}

expected<json_object *> ObjectReader::object(const char *key) { return field(key, json_type_object, "an object"); }

expected<json_object *> ObjectReader::array(const char *key) { return field(key, json_type_array, "an array"); }

expected<std::string> ObjectReader::str_or(const char *key, std::string fallback)
{
	if (!has(key)) {
		read_.insert(key);
		return fallback;
	}
	return str(key);
}

expected<int64_t> ObjectReader::integer_or(const char *key, int64_t fallback, int64_t min, int64_t max)
{
	if (!has(key)) {
		read_.insert(key);
		return fallback;
	}
	return integer(key, min, max);
}

expected<double> ObjectReader::number_or(const char *key, double fallback)
{
	if (!has(key)) {
		read_.insert(key);
		return fallback;
	}
	return number(key);
}

expected<bool> ObjectReader::boolean_or(const char *key, bool fallback)
{
	if (!has(key)) {
		read_.insert(key);
		return fallback;
	}
	return boolean(key);
}

expected<json_object *> ObjectReader::array_or_null(const char *key)
{
	if (!has(key)) {
		read_.insert(key);
		return static_cast<json_object *>(nullptr);
	}
	return array(key);
}

expected<json_object *> ObjectReader::object_or_null(const char *key)
{
	if (!has(key)) {
		read_.insert(key);
		return static_cast<json_object *>(nullptr);
	}
	return object(key);
}

status ObjectReader::finish() const
{
	if (!ok_)
		return unexpected(err_);
	json_object_object_foreach(obj_, key, val)
	{
		(void)val;
		if (!read_.count(key))
			return unexpected(field_path(key), "unknown field");
	}
	return loom::ok();
}

} // namespace loom
