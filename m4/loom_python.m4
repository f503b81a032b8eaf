dnl LOOM_PYTHON_SDK: the Python checkpoint SDK (sdk/python) as a package.
dnl `make` builds its wheel (sdk/python/dist/loom_ckpt-VERSION-py3-none-any.whl)
dnl with setuptools (>= 61, PEP 621) and wheel, offline, and `make install`
dnl unpacks it into PYTHON_SITEDIR, where the interpreter finds it.
dnl Sets PYTHON3 (precious), PYTHON_SITEDIR, the conditional
dnl BUILD_PYTHON_WHEEL and loom_python_wheel_note (for the summary).
AC_DEFUN([LOOM_PYTHON_SDK], [
AC_ARG_VAR([PYTHON3], [the Python 3 that builds the SDK's wheel (default: the first python3 in PATH, or /usr/bin/python3, with setuptools >= 61 and wheel)])
AC_ARG_ENABLE([python-wheel],
  [AS_HELP_STRING([--disable-python-wheel], [neither build the Python SDK's wheel nor install the loom_ckpt package])],
  [], [enable_python_wheel=yes])
AC_ARG_WITH([python-sitedir],
  [AS_HELP_STRING([--with-python-sitedir=DIR], [where `make install` puts the loom_ckpt package (default: PREFIX/lib/python3.X/site-packages; Debian: /usr/lib/python3/dist-packages)])],
  [], [with_python_sitedir=])

dnl The SDK's version is configure's: loom_ckpt/_version.py must say the same.
loom_sdk_version=`sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$srcdir/sdk/python/loom_ckpt/_version.py"`
AS_IF([test "x$loom_sdk_version" != "x$PACKAGE_VERSION"],
  [AC_MSG_ERROR([sdk/python/loom_ckpt/_version.py says version "$loom_sdk_version", configure.ac's version is $PACKAGE_VERSION: make them the same])])

loom_python_ok=no
AS_IF([test "x$enable_python_wheel" != xno], [
  AC_MSG_CHECKING([for a Python 3 with setuptools >= 61 and wheel])
  AS_IF([test -n "$PYTHON3"], [loom_python_candidates=$PYTHON3],
    [loom_python_candidates="`command -v python3 2>/dev/null` /usr/bin/python3"])
  for loom_py in $loom_python_candidates; do
    AS_IF([test -x "$loom_py" || command -v "$loom_py" >/dev/null 2>&1],
      [AS_IF(["$loom_py" -c 'import sys, setuptools, setuptools.build_meta, wheel
sys.exit(0 if sys.version_info >= (3, 8) and int(setuptools.__version__.split(".").pop(0)) >= 61 else 1)' >&AS_MESSAGE_LOG_FD 2>&1],
        [PYTHON3=$loom_py; loom_python_ok=yes; break])])
  done
  AS_IF([test "x$loom_python_ok" = xyes], [AC_MSG_RESULT([$PYTHON3])], [
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([building the Python SDK's wheel needs Python >= 3.8 with setuptools >= 61 and wheel (tried: $loom_python_candidates; Debian: apt-get install python3 python3-setuptools python3-wheel; or set PYTHON3=...), or configure --disable-python-wheel])])
  AS_IF([test -z "$with_python_sitedir"],
    [with_python_sitedir=`"$PYTHON3" -c 'import sysconfig; print(sysconfig.get_path("purelib", "posix_prefix", vars={"base": "${prefix}"}))'`])
  loom_python_wheel_note="yes ($PYTHON3), installed into $with_python_sitedir"
], [
  AS_IF([test -z "$PYTHON3"], [AC_PATH_PROGS([PYTHON3], [python3], [python3])])
  loom_python_wheel_note="no (--disable-python-wheel): make install leaves the Python SDK out"
])
PYTHON_SITEDIR=$with_python_sitedir
AC_SUBST([PYTHON_SITEDIR])
AM_CONDITIONAL([BUILD_PYTHON_WHEEL], [test "x$loom_python_ok" = xyes])
])
