#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include "lib/util/log.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace loom {
namespace {

// Shortest text that reads back as the same double ("0.5", "1e-06").
std::string shown_real(double v)
{
	char buf[32];
	for (int prec = 6; prec <= 17; prec++) {
		std::snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (std::strtod(buf, nullptr) == v)
			break;
	}
	return buf;
}

std::string shown_list(const std::vector<std::string> &items)
{
	std::string out;
	for (const auto &i : items)
		out += (out.empty() ? "" : ",") + i;
	return out;
}

} // namespace

ConfigSchema &ConfigSchema::add(std::string key, std::string help, Setter setter, Show show)
{
	if (!keys_.count(key))
		order_.push_back(key);
	keys_[key] = Key{std::move(help), std::move(setter), std::move(show)};
	return *this;
}

std::vector<std::pair<std::string, std::string>> ConfigSchema::values() const
{
	std::vector<std::pair<std::string, std::string>> out;
	for (const auto &k : order_)
		if (const Key &key = keys_.at(k); key.show)
			out.emplace_back(k, key.show());
	return out;
}

ConfigSchema &ConfigSchema::string(std::string key, std::string *out, std::string help)
{
	return add(
		std::move(key), std::move(help),
		[out](std::string_view v) -> status {
			if (v.empty())
				return unexpected("empty value");
			*out = std::string(v);
			return ok();
		},
		[out] { return *out; });
}

ConfigSchema &ConfigSchema::integer(std::string key, int64_t *out, int64_t min, int64_t max, std::string help)
{
	return add(
		std::move(key), std::move(help),
		[=](std::string_view v) -> status {
			auto r = parse_int(v, min, max);
			if (!r)
				return unexpected(r.error());
			*out = *r;
			return ok();
		},
		[out] { return std::to_string(*out); });
}

ConfigSchema &ConfigSchema::real(std::string key, double *out, double min, double max, std::string help)
{
	return add(
		std::move(key), std::move(help),
		[=](std::string_view v) -> status {
			auto r = parse_real(v, min, max);
			if (!r)
				return unexpected(r.error());
			*out = *r;
			return ok();
		},
		[out] { return shown_real(*out); });
}

ConfigSchema &ConfigSchema::boolean(std::string key, bool *out, std::string help)
{
	return add(
		std::move(key), std::move(help),
		[=](std::string_view v) -> status {
			auto r = parse_bool(v);
			if (!r)
				return unexpected(r.error());
			*out = *r;
			return ok();
		},
		[out] { return std::string(*out ? "yes" : "no"); });
}

ConfigSchema &ConfigSchema::duration(std::string key, int64_t *out, int64_t min, int64_t max, std::string help)
{
	return add(
		std::move(key), std::move(help),
		[=](std::string_view v) -> status {
			auto r = parse_duration(v);
			if (!r)
				return unexpected(r.error());
			if (*r < min || *r > max)
				return unexpected("must be between " + format_duration(min) + " and " +
						  format_duration(max));
			*out = *r;
			return ok();
		},
		[out] { return std::to_string(*out); });
}

ConfigSchema &ConfigSchema::size(std::string key, uint64_t *out, std::string help)
{
	return add(
		std::move(key), std::move(help),
		[=](std::string_view v) -> status {
			auto r = parse_size(v);
			if (!r)
				return unexpected(r.error());
			*out = *r;
			return ok();
		},
		[out] { return std::to_string(*out); });
}

ConfigSchema &ConfigSchema::choice(std::string key, std::string *out, std::vector<std::string> allowed,
				   std::string help)
{
	return add(
		std::move(key), std::move(help),
		[=](std::string_view v) -> status {
			for (const auto &a : allowed)
				if (a == v) {
					*out = a;
					return ok();
				}
			std::string list;
			for (const auto &a : allowed)
				list += (list.empty() ? "" : ", ") + a;
			return unexpected("expected one of: " + list);
		},
		[out] { return *out; });
}

ConfigSchema &ConfigSchema::list(std::string key, std::vector<std::string> *out, std::string help)
{
	return add(
		std::move(key), std::move(help),
		[=](std::string_view v) -> status {
			std::vector<std::string> items;
			size_t start = 0;
			while (start <= v.size()) {
				size_t comma = v.find(',', start);
				if (comma == std::string_view::npos)
					comma = v.size();
				if (comma == start)
					return unexpected("empty item in comma-separated list");
				items.emplace_back(v.substr(start, comma - start));
				start = comma + 1;
			}
			*out = std::move(items);
			return ok();
		},
		[out] { return shown_list(*out); });
}

status ConfigSchema::split_word(std::string_view word, const std::string &where, std::vector<Word> &out)
{
	size_t eq = word.find('=');
	if (eq == std::string_view::npos)
		return unexpected(where, "'" + std::string(word) + "': expected key=value");
	if (eq == 0)
		return unexpected(where, "'" + std::string(word) + "': missing key before '='");
	out.push_back(Word{where, std::string(word.substr(0, eq)), std::string(word.substr(eq + 1))});
	return ok();
}

status ConfigSchema::apply(const std::vector<Word> &words) const
{
	std::map<std::string, std::string> seen;
	for (const auto &w : words) {
		auto it = keys_.find(w.key);
		const Prefix *family = nullptr;
		if (it == keys_.end())
			for (const Prefix &p : prefixes_)
				if (w.key.size() > p.prefix.size() + 1 &&
				    w.key.compare(0, p.prefix.size(), p.prefix) == 0 && w.key[p.prefix.size()] == '.')
					family = &p;
		if (it == keys_.end() && !family) {
			std::string known;
			for (const auto &k : order_)
				known += (known.empty() ? "" : ", ") + k;
			for (const Prefix &p : prefixes_)
				known += (known.empty() ? "" : ", ") + p.prefix + ".NAME";
			return unexpected(w.where, "unknown key '" + w.key + "' (known keys: " + known + ")");
		}
		if (auto prev = seen.find(w.key); prev != seen.end())
			return unexpected(w.where, "key '" + w.key + "' given twice (first at " + prev->second + ")");
		seen[w.key] = w.where;
		status st;
		if (family) {
			std::string_view name = std::string_view(w.key).substr(family->prefix.size() + 1);
			for (char ch : name)
				if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_')
					return unexpected(w.where,
							  "key '" + w.key + "': '" + std::string(name) +
								  "' is not a name (letters, digits, '-', '_')");
			st = family->setter(name, w.value);
		} else {
			st = it->second.setter(w.value);
		}
		if (!st)
			return unexpected(w.where,
					  "key '" + w.key + "': bad value '" + w.value + "': " + st.error().str());
	}
	return ok();
}

status ConfigSchema::parse_args(int argc, char *const argv[], const std::string &where) const
{
	std::vector<Word> words;
	for (int i = 0; i < argc; i++) {
		status st = split_word(argv[i] ? argv[i] : "",
				       where + (where.empty() ? "" : " ") + "argument " + std::to_string(i + 1), words);
		if (!st)
			return st;
	}
	return apply(words);
}

status ConfigSchema::parse_words(std::string_view text, const std::string &where) const
{
	std::vector<Word> words;
	std::istringstream in{std::string(text)};
	std::string word;
	while (in >> word) {
		status st = split_word(word, where, words);
		if (!st)
			return st;
	}
	return apply(words);
}

status ConfigSchema::parse_text(std::string_view text, const std::string &name) const
{
	std::vector<Word> words;
	std::istringstream in{std::string(text)};
	std::string line;
	int lineno = 0;
	while (std::getline(in, line)) {
		lineno++;
		size_t hash = line.find('#');
		if (hash != std::string::npos)
			line.resize(hash);
		std::istringstream ls(line);
		std::string word;
		std::string where = name + ":" + std::to_string(lineno);
		while (ls >> word) {
			status st = split_word(word, where, words);
			if (!st)
				return st;
		}
	}
	return apply(words);
}

status ConfigSchema::parse_file(const std::string &path) const
{
	std::ifstream in(path);
	if (!in)
		return unexpected(path, std::string("cannot open: ") + std::strerror(errno));
	std::ostringstream ss;
	ss << in.rdbuf();
	if (in.bad())
		return unexpected(path, "read error");
	return parse_text(ss.str(), path);
}

ConfigSchema &ConfigSchema::prefix(std::string prefix, std::string help, NamedSetter setter)
{
	prefixes_.push_back({std::move(prefix), std::move(help), std::move(setter)});
	return *this;
}

std::string ConfigSchema::describe() const
{
	std::string out;
	for (const auto &k : order_) {
		out += "  " + k;
		const auto &h = keys_.at(k).help;
		if (!h.empty())
			out += std::string(k.size() < 22 ? 22 - k.size() : 1, ' ') + h;
		out += "\n";
	}
	for (const Prefix &p : prefixes_) {
		std::string k = p.prefix + ".NAME";
		out += "  " + k + std::string(k.size() < 22 ? 22 - k.size() : 1, ' ') + p.help + "\n";
	}
	return out;
}

} // namespace loom
