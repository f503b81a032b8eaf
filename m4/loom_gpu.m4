# Optional GPU and fabric libraries, the hwloc/Slurm way:
#   not asked for and missing  -> warning, feature left out
#   asked for (--with-x) and missing -> error
# NVML is never linked: lib/health and lib/topo load libnvidia-ml.so.1 with dlopen.

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

# LOOM_WITH_CUDA: --with-cuda[=PATH]
AC_DEFUN([LOOM_WITH_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=PATH@:>@], [build the CUDA GPU probes (default: if found in /usr/local/cuda)])],
    [], [with_cuda=check])
  have_cuda=no
  CUDA_CPPFLAGS=
  CUDA_LDFLAGS=
  CUDA_LIBS=
  NVCC=
  AS_IF([test "x$with_cuda" != xno], [
    cuda_dirs="$with_cuda"
    AS_IF([test "x$with_cuda" = xyes || test "x$with_cuda" = xcheck], [cuda_dirs="/usr/local/cuda /usr"])
    for d in $cuda_dirs; do
      AS_IF([test -f "$d/include/cuda_runtime.h"], [
        loom_save_CPPFLAGS=$CPPFLAGS; loom_save_LIBS=$LIBS; loom_save_LDFLAGS=$LDFLAGS
        CPPFLAGS="$CPPFLAGS -I$d/include"
        LDFLAGS="$LDFLAGS -L$d/lib64 -L$d/lib"
        AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [
          have_cuda=yes
          CUDA_CPPFLAGS="-I$d/include"
          CUDA_LDFLAGS="-L$d/lib64 -L$d/lib -Wl,-rpath,$d/lib64"
          CUDA_LIBS="-lcudart"
          AS_IF([test -x "$d/bin/nvcc"], [NVCC="$d/bin/nvcc"])])
        CPPFLAGS=$loom_save_CPPFLAGS; LIBS=$loom_save_LIBS; LDFLAGS=$loom_save_LDFLAGS
        AS_UNSET([ac_cv_lib_cudart_cudaGetDeviceCount])
      ])
      AS_IF([test "x$have_cuda" = xyes], [break])
    done
    AS_IF([test "x$have_cuda" != xyes], [
      AS_IF([test "x$with_cuda" = xcheck],
        [AC_MSG_WARN([CUDA not found: GPU probes (memory bandwidth) are left out])],
        [AC_MSG_ERROR([--with-cuda given but no usable CUDA runtime (cuda_runtime.h, libcudart) under: $cuda_dirs])])])
  ])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([NVCC])
  AS_IF([test "x$have_cuda" = xyes], [AC_DEFINE([HAVE_CUDA], [1], [CUDA runtime is available])])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
  AM_CONDITIONAL([HAVE_NVCC], [test "x$NVCC" != x])
])

# LOOM_WITH_NCCL: --with-nccl[=PATH]
AC_DEFUN([LOOM_WITH_NCCL], [
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl@<:@=PATH@:>@], [build the NCCL all-reduce probe (default: if found)])],
    [], [with_nccl=check])
  have_nccl=no
  NCCL_CPPFLAGS=
  NCCL_LDFLAGS=
  NCCL_LIBS=
  AS_IF([test "x$with_nccl" != xno], [
    nccl_dirs="$with_nccl"
    AS_IF([test "x$with_nccl" = xyes || test "x$with_nccl" = xcheck], [nccl_dirs="/usr /usr/local/cuda /usr/local/nccl"])
    for d in $nccl_dirs; do
      AS_IF([test -f "$d/include/nccl.h" && test "x$have_cuda" = xyes], [
        have_nccl=yes
        NCCL_CPPFLAGS="-I$d/include"
        NCCL_LDFLAGS="-L$d/lib -L$d/lib64 -L$d/lib/x86_64-linux-gnu"
        NCCL_LIBS="-lnccl"
        break])
    done
    AS_IF([test "x$have_nccl" != xyes], [
      AS_IF([test "x$with_nccl" = xcheck],
        [AC_MSG_WARN([NCCL (or CUDA) not found: the all-reduce probe is left out])],
        [AC_MSG_ERROR([--with-nccl given but nccl.h (with CUDA) was not found under: $nccl_dirs])])])
  ])
  AC_SUBST([NCCL_CPPFLAGS])
  AC_SUBST([NCCL_LDFLAGS])
  AC_SUBST([NCCL_LIBS])
  AS_IF([test "x$have_nccl" = xyes], [AC_DEFINE([HAVE_NCCL], [1], [NCCL is available])])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$have_nccl" = xyes])
])
