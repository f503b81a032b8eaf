// The conformance corpus's trees (tests/ckpt/conformance/README.md): a
// case's entries built in a checkpoint directory, manifests written from
// their specs, templates applied. Used by conformance_cpp.
#pragma once

#include <map>
#include <string>

struct json_object;

namespace loom::conformance {

struct Failure {
	std::string what;
};
// A case the runner cannot build: throws Failure.
[[noreturn]] void bad_case(const std::string &what);

std::string get_str(json_object *o);
json_object *member(json_object *o, const char *key); // nullptr when absent
void make_dirs(const std::string &path);
// Build the tree in 'ckpt'; returns what was written outside it (path: bytes).
std::map<std::string, std::string> build(json_object *tree, const std::string &ckpt, const std::string &outside);

} // namespace loom::conformance
