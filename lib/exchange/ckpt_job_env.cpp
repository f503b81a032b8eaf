#include "lib/exchange/ckpt_job_env.hpp"

#include <cctype>
#include <string_view>

namespace loom::exchange {

std::vector<std::pair<std::string, std::string>> job_control_env(const CkptRequest &r)
{
	if (!r.enabled)
		return {};
	return {{job_env_ckpt, "1"}, {job_env_max_restarts, std::to_string(r.max_restarts)}};
}

CkptRequest ckpt_request_from_env(const std::vector<std::string> &env)
{
	CkptRequest r;
	const std::string ckpt = std::string(job_env_ckpt) + "=";
	const std::string budget = std::string(job_env_max_restarts) + "=";
	for (const auto &e : env) {
		if (e.rfind(ckpt, 0) == 0) {
			std::string_view v = std::string_view(e).substr(ckpt.size());
			r.enabled = v == "1";
		} else if (e.rfind(budget, 0) == 0) {
			std::string_view v = std::string_view(e).substr(budget.size());
			bool digits = !v.empty() && v.size() <= 6;
			for (char c : v)
				digits = digits && std::isdigit(static_cast<unsigned char>(c));
			r.max_restarts = digits ? std::stoll(std::string(v)) : -1;
		}
	}
	return r;
}

} // namespace loom::exchange
