// loom ckpt: preparing a checkpoint directory without trusting the path.
//
// The directory is created below an allowed root one component at a time
// (mkdirat + openat with O_NOFOLLOW), so a symlink planted anywhere below the
// root is refused, never followed. Every directory below the root must belong
// to the caller (or root); the last one is the caller's, mode 0700.
//
// The plugin runs as root in slurmstepd and touches the user's directories
// only through run_helper(): it executes loom-ckpt-helper, which takes the
// job user's identity for good (become) before it does anything. slurmstepd
// is multi-threaded, so nothing but async-signal-safe calls may run between
// fork and exec there: argv and envp are built before the fork, the child
// only moves file descriptors and executes the helper. run_as() (a function
// run in a forked child) is for single-threaded processes only and refuses
// to run in a multi-threaded one.
#pragma once

#include "lib/util/expected.hpp"

#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace loom::ckpt {

// 'path' must be clean (check_clean_path) and at or below 'root'.
status make_checkpoint_dir(const std::string &root, const std::string &path);

struct Credentials {
	uid_t uid = 0;
	gid_t gid = 0;
	std::vector<gid_t> groups;
};

// Take cred's identity for good. With a real uid of root: groups, gid and uid
// (the effective uid is taken back first where only it was dropped), then
// root must be out of reach. Otherwise nothing is tried: the process must
// already be cred.uid through and through (real, effective and saved ids
// alike, not started set-id or with file capabilities), so a plain user acts
// only as themself. "cannot switch to uid U: why" when refused.
status become(const Credentials &cred);

// The helper's command line: the credential words (--uid=U --gid=G
// --groups=G1,G2, more --groups= words for a long list) and the operation
// with its arguments.
std::vector<std::string> credential_args(const Credentials &cred);
struct HelperArgs {
	Credentials cred;
	std::vector<std::string> operation; // the words after the credentials
};
expected<HelperArgs> parse_helper_args(int argc, char *const argv[]);

// Execute 'program' (absolute: loom-ckpt-helper) with the credential words
// and 'args', stdin and stderr on /dev/null, and return what it answers on
// stdout: "O<text>" is the text, "E<error>" the error. The helper is
// executed with the caller's identity and drops to cred itself. A helper
// that outlives timeout_s is killed. Errors name the program and the cause.
expected<std::string> run_helper(const std::string &program, const Credentials &cred,
				 const std::vector<std::string> &args, int timeout_s = 60);

// Run fn in a forked child with cred's identity; its text result (or error)
// comes back through a pipe. A child that outlives timeout_s is killed.
// Single-threaded processes only (tests, tools): refused in a process with
// more than one thread, where the child could block forever on a lock
// another thread held at fork time. slurmstepd uses run_helper.
expected<std::string> run_as(const Credentials &cred, const std::function<expected<std::string>()> &fn,
			     int timeout_s = 60);

} // namespace loom::ckpt
