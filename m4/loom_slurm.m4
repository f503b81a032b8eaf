# LOOM_SLURM: the installed Slurm headers (for SPANK), and --with-slurm-src=DIR,
# a configured Slurm source tree for the internal plugins (select, jobcomp).
# The tree must be the release the headers describe: internal plugins are
# refused by any other Slurm micro release.
AC_DEFUN([LOOM_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm=PATH], [prefix of the installed Slurm headers (default: /usr)])],
    [], [with_slurm=/usr])
  AC_ARG_WITH([slurm-src],
    [AS_HELP_STRING([--with-slurm-src=DIR],
      [configured Slurm source tree (the source dir, or a build dir of it) for select/topo and jobcomp/health;
       scripts/slurm-src.sh fetches and configures the one that matches the installed Slurm])],
    [], [with_slurm_src=no])
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where Slurm loads plugins from (default: LIBDIR/slurm-wlm on Debian, LIBDIR/slurm otherwise)])],
    [slurmplugindir=$withval], [
      AS_IF([test "x$with_slurm" != x/usr && test -d "$with_slurm/lib/slurm"],
        [slurmplugindir="$with_slurm/lib/slurm"],
        [test -d /usr/lib/x86_64-linux-gnu/slurm-wlm || test -d "$libdir/slurm-wlm" || test -f /etc/debian_version],
        [slurmplugindir='${libdir}/slurm-wlm'], [slurmplugindir='${libdir}/slurm'])])
  AC_SUBST([slurmplugindir])
  AC_ARG_WITH([slurm-sysconfdir],
    [AS_HELP_STRING([--with-slurm-sysconfdir=DIR], [the directory of slurm.conf when SLURM_CONF is not set, as this Slurm was built (default: /etc/slurm for /usr, PREFIX/etc otherwise)])],
    [slurm_sysconfdir=$withval], [
      AS_IF([test "x$with_slurm" = x/usr], [slurm_sysconfdir=/etc/slurm], [slurm_sysconfdir="$with_slurm/etc"])])
  AC_SUBST([slurm_sysconfdir])

  SLURM_CPPFLAGS=
  AS_IF([test "x$with_slurm" != x/usr], [SLURM_CPPFLAGS="-I$with_slurm/include"])
  loom_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
  have_slurm_headers=no
  AC_CHECK_HEADERS([slurm/spank.h slurm/slurm_version.h], [have_slurm_headers=yes],
    [AC_MSG_ERROR([Slurm headers not found (Debian: apt-get install libslurm-dev), or give --with-slurm=PREFIX])])
  AC_MSG_CHECKING([the installed Slurm version])
  AC_COMPUTE_INT([slurm_version_number], [SLURM_VERSION_NUMBER], [#include <slurm/slurm_version.h>],
    [AC_MSG_ERROR([cannot read SLURM_VERSION_NUMBER from slurm/slurm_version.h])])
  CPPFLAGS=$loom_save_CPPFLAGS
  SLURM_VERSION_MAJOR=`expr $slurm_version_number / 65536`
  SLURM_VERSION_MINOR=`expr $slurm_version_number / 256 % 256`
  SLURM_VERSION_MICRO=`expr $slurm_version_number % 256`
  SLURM_VERSION_STRING=`printf "%d.%02d.%d" $SLURM_VERSION_MAJOR $SLURM_VERSION_MINOR $SLURM_VERSION_MICRO`
  AC_MSG_RESULT([$SLURM_VERSION_STRING])
  # The interface family of this release: plugins/*/ hold one adapter per
  # family, and configure picks it. Releases between the families were never
  # tested with loom and are refused rather than guessed at.
  AC_MSG_CHECKING([the Slurm plugin interface family])
  AS_CASE([$SLURM_VERSION_MAJOR.$SLURM_VERSION_MINOR],
    [22.5], [SLURM_API_FAMILY=2205],
    [24.11], [SLURM_API_FAMILY=2411],
    [25.5|25.11|26.5], [SLURM_API_FAMILY=2505],
    [AC_MSG_RESULT([none])
     AC_MSG_ERROR([Slurm $SLURM_VERSION_STRING is not a release loom supports: 22.05, 24.11, 25.05, 25.11 and 26.05 are
  (see the README's table of releases)])])
  AC_MSG_RESULT([$SLURM_API_FAMILY])
  AC_SUBST([SLURM_API_FAMILY])
  # The release series (SPANK plugins load into any micro release of it) and
  # the next one, for the packages' version ranges.
  SLURM_SERIES=`printf "%d.%02d" $SLURM_VERSION_MAJOR $SLURM_VERSION_MINOR`
  SLURM_SERIES_NEXT=`printf "%d.%02d" $SLURM_VERSION_MAJOR \`expr $SLURM_VERSION_MINOR + 1\``
  SLURM_VERSION_NEXT_MICRO=`printf "%d.%02d.%d" $SLURM_VERSION_MAJOR $SLURM_VERSION_MINOR \`expr $SLURM_VERSION_MICRO + 1\``
  AC_SUBST([SLURM_SERIES])
  AC_SUBST([SLURM_SERIES_NEXT])
  AC_SUBST([SLURM_VERSION_NEXT_MICRO])
  AM_CONDITIONAL([SLURM_API_2205], [test "x$SLURM_API_FAMILY" = x2205])
  AM_CONDITIONAL([SLURM_API_2411], [test "x$SLURM_API_FAMILY" = x2411])
  AM_CONDITIONAL([SLURM_API_2505], [test "x$SLURM_API_FAMILY" = x2505])
  # Where this Slurm's daemons and libraries are (the plugin-load tests check
  # symbols against them).
  SLURM_PREFIX=$with_slurm
  AC_SUBST([SLURM_PREFIX])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_VERSION_STRING])

  have_slurm_src=no
  slurm_build=no
  SLURM_SRC_DIR=
  SLURM_SRC_CPPFLAGS=
  AS_IF([test "x$with_slurm_src" != xno && test "x$with_slurm_src" != x], [
    AS_IF([test "x$with_slurm_src" = xyes],
      [AC_MSG_ERROR([--with-slurm-src needs a directory: --with-slurm-src=DIR])])
    AS_CASE([$with_slurm_src], [/*], [], [with_slurm_src="`pwd`/$with_slurm_src"])
    AC_MSG_CHECKING([the Slurm source tree in $with_slurm_src])
    # Accept the build dir of an out-of-tree configure, or the source dir when configured in place.
    slurm_build=
    slurm_src=
    AS_IF([test -f "$with_slurm_src/config.h" && test -f "$with_slurm_src/slurm/slurm_version.h"],
      [slurm_build=$with_slurm_src])
    # The select interface header: src/common/ (22.05) or src/interfaces/ (23.02 on).
    loom_has_select_h() { test -f "$[]1/src/common/select.h" || test -f "$[]1/src/interfaces/select.h"; }
    AS_IF([loom_has_select_h "$with_slurm_src"], [slurm_src=$with_slurm_src])
    AS_IF([test -n "$slurm_build" && test -z "$slurm_src" && test -f "$slurm_build/Makefile"], [
      slurm_src=`sed -n 's/^abs_top_srcdir = //p' "$slurm_build/Makefile"`])
    AS_IF([test -z "$slurm_build" || test -z "$slurm_src" || ! loom_has_select_h "$slurm_src"], [
      AC_MSG_RESULT([no])
      AC_MSG_ERROR([$with_slurm_src is not a configured Slurm source tree (need config.h, slurm/slurm_version.h
  and src/common/select.h or src/interfaces/select.h). Run scripts/slurm.sh install VERSION to fetch and configure the one for the installed Slurm.])])
    src_version=`sed -n 's/^#define SLURM_VERSION_NUMBER *\(0x@<:@0-9a-fA-F@:>@*\).*/\1/p' "$slurm_build/config.h" | head -1`
    AS_IF([test -z "$src_version"], [
      AC_MSG_RESULT([no])
      AC_MSG_ERROR([$slurm_build/config.h has no SLURM_VERSION_NUMBER])])
    src_version_dec=`printf '%d' "$src_version"`
    AS_IF([test "$src_version_dec" != "$slurm_version_number"], [
      src_str=`printf "%d.%02d.%d" \`expr $src_version_dec / 65536\` \`expr $src_version_dec / 256 % 256\` \`expr $src_version_dec % 256\``
      AC_MSG_RESULT([no])
      AC_MSG_ERROR([Slurm version mismatch: the source tree $with_slurm_src is Slurm $src_str but the installed
  <slurm/slurm_version.h> is Slurm $SLURM_VERSION_STRING. Internal plugins only load into the exact
  release they were built against: use the source of $SLURM_VERSION_STRING (scripts/slurm-src.sh fetches it).])])
    AC_MSG_RESULT([yes, Slurm $SLURM_VERSION_STRING])
    have_slurm_src=yes
    SLURM_SRC_DIR=$slurm_src
    # -isystem: Slurm's internal headers are not ours to warn about.
    SLURM_SRC_CPPFLAGS="-DHAVE_CONFIG_H -isystem $slurm_build -isystem $slurm_build/slurm -isystem $slurm_src -isystem $slurm_src/src/common"
  ], [
    AC_MSG_WARN([no --with-slurm-src: select/topo and jobcomp/health are not built (scripts/slurm-src.sh prepares a tree)])
  ])
  SLURM_SRC_ARG=$slurm_build
  AC_SUBST([SLURM_SRC_ARG])
  AC_SUBST([SLURM_SRC_DIR])
  AC_SUBST([SLURM_SRC_CPPFLAGS])
  AM_CONDITIONAL([HAVE_SLURM_SRC], [test "x$have_slurm_src" = xyes])
])
