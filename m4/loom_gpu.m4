# Optional fabric library, the hwloc/Slurm way:
#   not asked for and missing  -> warning, feature left out
#   asked for (--with-x) and missing -> error
# GPU libraries are never linked: NVML (lib/health, lib/topo), the CUDA
# runtime and NCCL (lib/health's probes) are loaded with dlopen at run time.

# LOOM_WITH_IBVERBS
AC_DEFUN([LOOM_WITH_IBVERBS], [
  AC_ARG_WITH([ibverbs],
    [AS_HELP_STRING([--with-ibverbs], [use libibverbs for HCA discovery (default: if found; sysfs otherwise)])],
    [], [with_ibverbs=check])
  have_ibverbs=no
  AS_IF([test "x$with_ibverbs" != xno], [
    PKG_CHECK_MODULES([IBVERBS], [libibverbs], [have_ibverbs=yes], [
      AS_IF([test "x$with_ibverbs" = xyes],
        [AC_MSG_ERROR([--with-ibverbs given but libibverbs was not found (Debian: apt-get install libibverbs-dev)])],
        [AC_MSG_WARN([libibverbs not found: HCA discovery reads sysfs only])])])])
  AS_IF([test "x$have_ibverbs" = xyes], [AC_DEFINE([HAVE_IBVERBS], [1], [libibverbs is available])])
  AM_CONDITIONAL([HAVE_IBVERBS], [test "x$have_ibverbs" = xyes])
])
