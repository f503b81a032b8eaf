// Slurm's internal headers (from the configured source tree) that the
// internal plugins (select/topo, jobcomp/health) use, all inside one
// extern "C" block as they must be under g++. Only plugin adapters include it.
//
// Differences between releases that only concern where a header is:
// - the plugin interfaces moved from src/common/ (22.05) to src/interfaces/
//   (23.02 on): the include picks whichever the tree has;
// - Slurm names its list types List (22.05) or list_t (23.02 on); code here
//   writes `xlist *` / `listIterator *`, which every release has;
// - 24.05 on, src/common/extra_constraints.h names a struct member
//   `operator`, a C++ keyword: it is renamed while Slurm's headers are read
//   (the C library headers they use are read first, so none sees the macro).
#pragma once

#include <arpa/inet.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define operator slurm_operator_
extern "C" {
#include "config.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#if __has_include("src/interfaces/select.h")
#include "src/interfaces/gres.h"
#include "src/interfaces/jobcomp.h"
#include "src/interfaces/select.h"
#else
#include "src/common/gres.h"
#include "src/common/select.h"
#include "src/common/slurm_jobcomp.h"
#endif
#include "src/slurmctld/slurmctld.h"
}
#undef operator
