// Slurm's internal headers (from the configured source tree) that
// jobcomp/health needs, all inside one extern "C" block as they must be
// under g++. Only the files of this plugin include it.
#pragma once

extern "C" {
#include "config.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/slurm_jobcomp.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
}
