#!/bin/bash
# The Python SDK as a package. The wheel `make` built
# ($LOOM_BUILDDIR/sdk/python/dist) installed into a fresh venv (--no-deps
# --no-index): it imports from the venv's site-packages, says configure's
# version (LOOM_VERSION) in __version__ and in its metadata, and its loom-ckpt
# command answers --help. Then `pip install --no-build-isolation --no-deps` of
# a copy of sdk/python (the source tree may be read-only, and a build writes
# build/ and *.egg-info next to pyproject.toml) into another fresh venv.
# Builds no wheel of its own and skips nothing: without the wheel it fails.
#   LOOM_WHEEL=FILE  check that wheel instead (the test of this test)
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
b=${LOOM_BUILDDIR:-$src}
fails=0
fail() { echo "sdk_wheel: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "sdk_wheel: FAIL: $*" >&2; exit 1; }

version=${LOOM_VERSION:-$(sed -n 's/^PACKAGE_VERSION = //p' "$b/Makefile" 2>/dev/null)}
[ -n "$version" ] || die "no version: LOOM_VERSION is unset and $b/Makefile names no PACKAGE_VERSION"
py=${PYTHON3:-python3}
# The venvs see the system's packages: setuptools and wheel for the source
# tree's install, offline. Nothing is downloaded.
"$py" -c 'import venv' 2>/dev/null || die "$py has no venv module (Debian: apt-get install python3-venv)"
wheel=${LOOM_WHEEL:-$b/sdk/python/dist/loom_ckpt-$version-py3-none-any.whl}
[ -f "$wheel" ] || die "no wheel $wheel: \`make\` builds it (configure without --disable-python-wheel)"

work=$(mktemp -d "${TMPDIR:-/tmp}/loom-sdk-wheel.XXXXXX") || die "mktemp"
trap 'rm -rf "$work"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH PIP_INDEX_URL PIP_EXTRA_INDEX_URL

# A fresh venv: DIR. Prints nothing; fails the test when it cannot be made.
mkvenv() {
	"$py" -m venv --system-site-packages "$1" >"$work/venv.log" 2>&1 ||
		{ cat "$work/venv.log" >&2; die "$py -m venv $1 failed"; }
}
# Where VENV's python imports loom_ckpt from, run outside any source tree.
imported_from() {
	(cd "$work" && "$1/bin/python" -c 'import loom_ckpt, os; print(os.path.realpath(loom_ckpt.__file__))')
}
# VENV's site-packages (purelib).
site_of() {
	"$1/bin/python" -c 'import sysconfig, os; print(os.path.realpath(sysconfig.get_paths()["purelib"]))'
}

# ---- the wheel
echo "sdk_wheel: $wheel"
mkvenv "$work/wv"
if ! "$work/wv/bin/python" -m pip install --no-deps --no-index "$wheel" >"$work/wv.log" 2>&1; then
	cat "$work/wv.log" >&2
	die "pip install of the wheel failed"
fi
site=$(site_of "$work/wv")
file=$(imported_from "$work/wv") || fail "the wheel's loom_ckpt does not import"
case $file in
	"$site"/loom_ckpt/__init__.py) echo "sdk_wheel: wheel: imports from $file" ;;
	*) fail "the wheel's loom_ckpt imports from $file, not from the venv's $site" ;;
esac
got=$(cd "$work" && "$work/wv/bin/python" -c 'import loom_ckpt; print(loom_ckpt.__version__)' 2>&1)
[ "$got" = "$version" ] || fail "loom_ckpt.__version__ is '$got', configure's version $version"
got=$(cd "$work" && "$work/wv/bin/python" -c 'import importlib.metadata as m; print(m.version("loom-ckpt"))' 2>&1)
[ "$got" = "$version" ] || fail "the wheel's metadata says version '$got', configure's version $version"
# No required dependency, and no extra that names torch.
req=$(cd "$work" && "$work/wv/bin/python" -c 'import importlib.metadata as m; print("\n".join(m.requires("loom-ckpt") or []))' 2>&1)
echo "$req" | grep -v 'extra ==' | grep . >/dev/null && fail "the wheel requires: $req"
echo "$req" | grep -i '^torch' >/dev/null && fail "the wheel names torch as a dependency: $req"
if [ -x "$work/wv/bin/loom-ckpt" ]; then
	out=$("$work/wv/bin/loom-ckpt" --help 2>&1) || fail "loom-ckpt --help exits $?: $out"
	echo "$out" | grep 'usage:' >/dev/null || fail "loom-ckpt --help prints no usage: $out"
	mkdir -p "$work/empty"
	"$work/wv/bin/loom-ckpt" ls "$work/empty" >/dev/null 2>&1 || fail "loom-ckpt ls of an empty directory fails"
else
	fail "the wheel installs no loom-ckpt command ($work/wv/bin: $(ls "$work/wv/bin" | tr '\n' ' '))"
fi
# Every module of the source tree is in the wheel.
for m in "$src"/sdk/python/loom_ckpt/*.py; do
	[ -f "$site/loom_ckpt/$(basename "$m")" ] || fail "the wheel lacks loom_ckpt/$(basename "$m")"
done

# ---- pip install of the source tree (a copy: nothing is written into $src)
mkdir -p "$work/src"
cp "$src/sdk/python/pyproject.toml" "$work/src/" && cp -R "$src/sdk/python/loom_ckpt" "$work/src/" &&
	chmod -R u+w "$work/src" || die "cannot copy $src/sdk/python"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
mkvenv "$work/sv"
if ! (cd "$work" && "$work/sv/bin/python" -m pip install --no-build-isolation --no-deps --no-index "$work/src") >"$work/sv.log" 2>&1; then
	cat "$work/sv.log" >&2
	die "pip install --no-build-isolation of sdk/python failed"
fi
site=$(site_of "$work/sv")
file=$(imported_from "$work/sv") || fail "the source tree's loom_ckpt does not import"
case $file in
	"$site"/loom_ckpt/__init__.py) echo "sdk_wheel: source tree: imports from $file" ;;
	*) fail "the source tree's loom_ckpt imports from $file, not from the venv's $site" ;;
esac
got=$(cd "$work" && "$work/sv/bin/python" -c 'import loom_ckpt; print(loom_ckpt.__version__)' 2>&1)
[ "$got" = "$version" ] || fail "the source tree's loom_ckpt.__version__ is '$got', configure's version $version"
[ -x "$work/sv/bin/loom-ckpt" ] || fail "the source tree's install has no loom-ckpt command"

[ $fails = 0 ] || { echo "sdk_wheel: $fails problems" >&2; exit 1; }
echo "sdk_wheel: ok (loom-ckpt $version)"
