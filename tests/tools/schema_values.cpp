// schema_values FORMAT [KEY=VALUE...]: the values a reader's keys start from
// (the program's defaults), one "key=value" per line, in the order the reader
// registers them. With KEY=VALUE words, each is parsed by that reader's own
// setter into fresh defaults and the value its key then holds is printed the
// same way, so a man page's "key=default" can be compared with the default
// by meaning ("300s" and "5min" are both 300). tests/tools/man_keys.py runs it.
//
// FORMAT: health (loom-health.conf), topo (loom-topo.conf), weights (loom
// place --weights), spank_ckpt and spank_place (plugstack.conf arguments),
// jobcomp_health (JobCompParams).
#include "lib/ckpt/options.hpp"
#include "lib/health/config.hpp"
#include "lib/health/jobcomp.hpp"
#include "lib/place/site_args.hpp"
#include "lib/place/topo_conf.hpp"
#include "lib/place/weights.hpp"

#include <cstdio>
#include <functional>
#include <string>

namespace {

using loom::ConfigSchema;

// Runs fn with a schema bound to fresh defaults of FORMAT; false if unknown.
bool with_schema(const std::string &format, const std::function<void(const ConfigSchema &)> &fn)
{
	if (format == "health") {
		loom::health::HealthConfig c;
		fn(loom::health::health_config_schema(c));
	} else if (format == "topo") {
		loom::place::TopoConf c;
		fn(loom::place::topo_conf_schema(c));
	} else if (format == "spank_ckpt") {
		loom::ckpt::SiteConfig c;
		fn(c.schema());
	} else if (format == "spank_place") {
		loom::place::SiteArgs a;
		fn(loom::place::site_args_schema(a));
	} else if (format == "jobcomp_health") {
		loom::health::JobcompOptions o;
		fn(loom::health::jobcomp_schema(o));
	} else if (format == "weights") {
		loom::place::Weights w;
		fn(loom::place::weights_schema(w));
	} else {
		return false;
	}
	return true;
}

std::string key_of(const std::string &word) { return word.substr(0, word.find('=')); }

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: schema_values health|topo|weights|spank_ckpt|spank_place|jobcomp_health "
				     "[KEY=VALUE...]\n");
		return 2;
	}
	const std::string format = argv[1];
	int rc = 0;
	bool known = with_schema(format, [](const ConfigSchema &s) {
		for (const auto &[k, v] : s.values())
			std::printf("%s=%s\n", k.c_str(), v.c_str());
	});
	if (!known) {
		std::fprintf(stderr, "schema_values: unknown format '%s'\n", format.c_str());
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		const std::string word = argv[i];
		with_schema(format, [&](const ConfigSchema &s) {
			if (auto st = s.parse_words(word, "argument"); !st) {
				std::printf("! %s: %s\n", word.c_str(), st.error().str().c_str());
				rc = 1;
				return;
			}
			for (const auto &[k, v] : s.values())
				if (k == key_of(word))
					std::printf("= %s=%s\n", k.c_str(), v.c_str());
		});
	}
	return rc;
}
