// spank_place's plugstack.conf arguments (site_args.hpp).
#include "lib/place/site_args.hpp"

namespace loom::place {

ConfigSchema site_args_schema(SiteArgs &args)
{
	ConfigSchema schema;
	schema.boolean("rank_order", &args.rank_order, "LOOM_NODE_RANK and LOOM_HOSTFILE in each step")
		.boolean("comm_env", &args.comm_env, "jobs may ask for NCCL settings from the fabric (--comm-env)")
		.string("conf_dir", &args.conf_dir, "slurm.conf's directory, where the fabric files are")
		.string("fabric_module", &args.fabric_module, "loom_fabric.so (default: beside spank_place.so)");
	return schema;
}

expected<SiteArgs> parse_site_args(int argc, char *const argv[], const std::string &where)
{
	SiteArgs args;
	if (auto st = site_args_schema(args).parse_args(argc, argv, where); !st)
		return unexpected(st.error());
	return args;
}

} // namespace loom::place
