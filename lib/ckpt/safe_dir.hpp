// loom ckpt: preparing a checkpoint directory without trusting the path.
//
// The directory is created below an allowed root one component at a time
// (mkdirat + openat with O_NOFOLLOW), so a symlink planted anywhere below the
// root is refused, never followed. Every directory below the root must belong
// to the caller (or root); the last one is the caller's, mode 0700.
//
// run_as() performs filesystem work with a job user's credentials: it forks,
// drops to the user for good in the child (groups, gid, uid) and returns the
// child's answer. The plugin runs as root in slurmstepd and touches the
// user's directories only this way.
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

// Run fn in a child process with cred's identity; its text result (or error)
// comes back through a pipe. A child that outlives timeout_s is killed.
expected<std::string> run_as(const Credentials &cred, const std::function<expected<std::string>()> &fn,
			     int timeout_s = 60);

} // namespace loom::ckpt
