#include "lib/ckpt/policy.hpp"

#include <algorithm>
#include <cmath>

namespace loom::ckpt {

double young_interval(double cost_s, double mtbf_s) { return std::sqrt(2.0 * cost_s * mtbf_s); }

double daly_interval(double cost_s, double mtbf_s)
{
	if (cost_s >= 2.0 * mtbf_s)
		return mtbf_s;
	double r = cost_s / (2.0 * mtbf_s);
	return std::sqrt(2.0 * cost_s * mtbf_s) * (1.0 + std::sqrt(r) / 3.0 + r / 9.0) - cost_s;
}

int64_t auto_interval(double cost_s, double mtbf_s, IntervalBounds b)
{
	if (!(cost_s > 0) || !(mtbf_s > 0) || !std::isfinite(cost_s) || !std::isfinite(mtbf_s))
		return b.max_s;
	double t = std::llround(daly_interval(cost_s, mtbf_s));
	return std::clamp(static_cast<int64_t>(t), b.min_s, b.max_s);
}

int64_t time_limit_margin(double last_write_s, int64_t min_s)
{
	double m = std::isfinite(last_write_s) && last_write_s > 0 ? 2.0 * last_write_s + 10.0 : 0.0;
	return std::max<int64_t>(min_s, static_cast<int64_t>(std::ceil(std::min(m, 1e7))));
}

} // namespace loom::ckpt
