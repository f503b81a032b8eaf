#include "plugins/spank_ckpt/standby_calls.hpp"

#include "lib/util/fs.hpp"
#include "lib/util/subprocess.hpp"

#include <sys/stat.h>

namespace loom::spank_ckpt::standby {

std::string field(const std::string &line, const std::string &key)
{
	std::string k = " " + key + "=";
	size_t at = (" " + line).find(k);
	if (at == std::string::npos)
		return {};
	size_t start = at + k.size() - 1;
	size_t end = line.find_first_of(" \n", start);
	return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

expected<std::string> call(const std::vector<std::string> &argv)
{
	RunOptions o;
	o.timeout_s = call_timeout_s;
	o.merge_stderr = true;
	auto r = run_command(argv, o);
	if (!r)
		return unexpected(r.error());
	if (r->exit_code != 0)
		return unexpected(command_line(argv),
				  trim(r->output).empty() ? "failed" : std::string(trim(r->output)));
	return r->output;
}

std::string sibling(const std::string &scontrol, const char *name)
{
	auto slash = scontrol.rfind('/');
	return slash == std::string::npos ? name : scontrol.substr(0, slash + 1) + name;
}

uint64_t file_size(const std::string &path)
{
	struct stat st;
	return !path.empty() && ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

} // namespace loom::spank_ckpt::standby
