// loom: a small expected<T, Error> for C++20 (std::expected arrives in C++23).
//
// Every fallible function in lib/ returns loom::expected<T> (or loom::status
// for "nothing or an error"). An Error says what was wrong and where: a file,
// a line, a JSON path or a key, so that the message a user finally reads names
// the exact spot.
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace loom {

struct Error {
	std::string where;   // "file:line", "$.nodes[3].gpus", "key=value"; may be empty
	std::string message; // what was wrong, lower case, no trailing period

	Error() = default;
	explicit Error(std::string msg) : message(std::move(msg)) {}
	Error(std::string w, std::string msg) : where(std::move(w)), message(std::move(msg)) {}

	// "where: message" or just "message".
	std::string str() const { return where.empty() ? message : where + ": " + message; }

	// Prefix more context: Error("key").within("loom.conf:3") -> "loom.conf:3: key: ..."
	Error within(const std::string &outer) const
	{
		if (outer.empty())
			return *this;
		return Error(where.empty() ? outer : outer + ": " + where, message);
	}
};

// Tag to build the error alternative: return loom::unexpected("bad value");
struct unexpected {
	Error error;
	explicit unexpected(Error e) : error(std::move(e)) {}
	explicit unexpected(std::string msg) : error(std::move(msg)) {}
	unexpected(std::string where, std::string msg) : error(std::move(where), std::move(msg)) {}
};

template <typename T>
class [[nodiscard]] expected {
public:
	using value_type = T;

	expected(const T &v) : v_(std::in_place_index<0>, v) {}
	expected(T &&v) : v_(std::in_place_index<0>, std::move(v)) {}
	template <typename U>
	requires(std::is_constructible_v<T, U &&> && !std::is_same_v<std::decay_t<U>, T> &&
		 !std::is_same_v<std::decay_t<U>, unexpected> && !std::is_same_v<std::decay_t<U>, expected>)
		expected(U &&v)
		: v_(std::in_place_index<0>, T(std::forward<U>(v)))
	{
	}
	expected(unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}

	bool has_value() const { return v_.index() == 0; }
	explicit operator bool() const { return has_value(); }

	T &value() &
	{
		assert(has_value());
		return std::get<0>(v_);
	}
	const T &value() const &
	{
		assert(has_value());
		return std::get<0>(v_);
	}
	T &&value() &&
	{
		assert(has_value());
		return std::get<0>(std::move(v_));
	}
	T &operator*() & { return value(); }
	const T &operator*() const & { return value(); }
	T *operator->() { return &value(); }
	const T *operator->() const { return &value(); }

	const Error &error() const
	{
		assert(!has_value());
		return std::get<1>(v_);
	}

	template <typename U>
	T value_or(U &&fallback) const &
	{
		return has_value() ? std::get<0>(v_) : T(std::forward<U>(fallback));
	}

private:
	std::variant<T, Error> v_;
};

// expected<void>: success or an Error.
template <>
class [[nodiscard]] expected<void> {
public:
	expected() = default;
	expected(unexpected u) : err_(std::move(u.error)), ok_(false) {}

	bool has_value() const { return ok_; }
	explicit operator bool() const { return ok_; }
	const Error &error() const
	{
		assert(!ok_);
		return err_;
	}

private:
	Error err_;
	bool ok_ = true;
};

using status = expected<void>;

inline status ok() { return {}; }

} // namespace loom
