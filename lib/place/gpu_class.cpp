#include "lib/place/gpu_class.hpp"

#include <algorithm>
#include <cctype>

namespace loom::place {

namespace {

bool known(const std::vector<std::string> &classes, std::string_view word)
{
	return !word.empty() && std::find(classes.begin(), classes.end(), word) != classes.end();
}

bool feature_char(char ch)
{
	return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
}

// The first word of a constraint expression that is a class.
std::string class_in_constraint(std::string_view features, const std::vector<std::string> &classes)
{
	size_t start = 0;
	for (size_t i = 0; i <= features.size(); i++) {
		if (i < features.size() && feature_char(features[i]))
			continue;
		if (std::string_view word = features.substr(start, i - start); known(classes, word))
			return std::string(word);
		start = i + 1;
	}
	return {};
}

} // namespace

std::string job_gpu_class(std::string_view constraint, std::string_view tres, const std::vector<std::string> &classes)
{
	if (std::string c = class_in_constraint(constraint, classes); !c.empty())
		return c;
	if (GresGpu g = gres_gpu(tres); known(classes, g.type))
		return g.type;
	return {};
}

} // namespace loom::place
