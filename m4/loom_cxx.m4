# LOOM_CXX_STD(VERSION): require -std=c++VERSION.
AC_DEFUN([LOOM_CXX_STD], [
  AC_CACHE_CHECK([whether $CXX accepts -std=c++$1], [loom_cv_cxx_std], [
    loom_save_CXXFLAGS=$CXXFLAGS
    CXXFLAGS="$CXXFLAGS -std=c++$1"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <concepts>
#include <span>
template <std::integral T> T twice(T v) { return v * 2; }]], [[return twice(0);]])],
      [loom_cv_cxx_std=yes], [loom_cv_cxx_std=no])
    CXXFLAGS=$loom_save_CXXFLAGS])
  AS_IF([test "x$loom_cv_cxx_std" != xyes],
    [AC_MSG_ERROR([a C++$1 compiler is required (g++ >= 11 or clang++ >= 14)])])
  CXXFLAGS="$CXXFLAGS -std=c++$1"
])

# AX_PTHREAD_SIMPLE: -pthread for compile and link.
AC_DEFUN([AX_PTHREAD_SIMPLE], [
  PTHREAD_CFLAGS=-pthread
  PTHREAD_LIBS=-pthread
  AC_SUBST([PTHREAD_CFLAGS])
  AC_SUBST([PTHREAD_LIBS])
])

# LOOM_COMPILER_FLAGS: warnings, -Werror, hidden visibility, hardening, sanitizers, fuzzers.
AC_DEFUN([LOOM_COMPILER_FLAGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (CI does)])],
    [], [enable_werror=no])
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers], [build with AddressSanitizer and UndefinedBehaviorSanitizer (for tests)])],
    [], [enable_sanitizers=no])
  AC_ARG_ENABLE([fuzzers],
    [AS_HELP_STRING([--enable-fuzzers], [build the libFuzzer targets in tests/fuzz (needs clang)])],
    [], [enable_fuzzers=no])

  LOOM_WARN_FLAGS="-Wall -Wextra -Wshadow=local -Wnon-virtual-dtor -Wformat=2 -Wno-missing-field-initializers"
  AS_IF([test "x$enable_werror" = xyes], [LOOM_WARN_FLAGS="$LOOM_WARN_FLAGS -Werror"])
  LOOM_HARDEN_FLAGS="-fstack-protector-strong -D_FORTIFY_SOURCE=2 -fno-strict-aliasing"
  LOOM_SAN_FLAGS=
  AS_IF([test "x$enable_sanitizers" = xyes], [
    LOOM_SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    LOOM_HARDEN_FLAGS="-fno-strict-aliasing"
  ])
  AC_SUBST([LOOM_WARN_FLAGS])
  AC_SUBST([LOOM_HARDEN_FLAGS])
  AC_SUBST([LOOM_SAN_FLAGS])
  LOOM_VISIBILITY_FLAGS="-fvisibility=hidden -fvisibility-inlines-hidden"
  AC_SUBST([LOOM_VISIBILITY_FLAGS])

  AS_IF([test "x$enable_fuzzers" = xyes], [
    AC_CHECK_PROGS([CLANGXX], [clang++ clang++-14], [no])
    AS_IF([test "x$CLANGXX" = xno], [AC_MSG_ERROR([--enable-fuzzers needs clang++ (Debian: apt-get install clang)])])
  ])
  AM_CONDITIONAL([ENABLE_FUZZERS], [test "x$enable_fuzzers" = xyes])
])
