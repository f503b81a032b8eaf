# The arguments and set-up every seeded loom sim benchmark (bench/sim_*.sh)
# shares, sourced with the script's arguments once it has set its defaults:
#   top    the source tree;  name  the script's name, for messages
#   page   the results page; work  its scratch folder; seeds "1 2 3 4"
# Takes [--out FILE] [--work DIR] [--seeds "1 2 3 4"]; sets loom (the built
# command) and makes work anew. Exits 2 on an unknown option, 1 when loom is
# not built.
# page and seeds are the including script's.
# shellcheck disable=SC2034
loom=${LOOM_BUILDDIR:-$top/_build}/tools/loom
while [ $# -gt 0 ]; do
	case $1 in
	--out) page=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	*) echo "$name: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -x "$loom" ] || { echo "$name: $loom: build loom first (scripts/build.sh)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
