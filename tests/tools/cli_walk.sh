#!/bin/bash
# Every loom command and subcommand, as a script calls it: `--help` prints the
# usage on stdout, nothing on stderr, and exits 0; a bad option exits 2 (bad
# usage) and the first line on stderr names the command in full and the option;
# a bad value for each option its usage says takes a number, a duration or a
# size exits 2 with "loom CMD: --option 'VALUE': why" as the first line.
#   cli_walk.sh [LOOM]      (default $LOOM_BUILDDIR/tools/loom)
set -uo pipefail
loom=${1:-${LOOM_BUILDDIR:-.}/tools/loom}
[ -x "$loom" ] || { echo "cli_walk: $loom: not an executable"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
n=0 nv=0
# The usage lines of "loom CMD SUB" in a help that may show several
# commands: the completion's own reader (one reading of the usage text).
comp=${LOOM_SRCDIR:-.}/etc/bash-completion/loom
[ -f "$comp" ] || { echo "cli_walk: no $comp"; exit 1; }
# shellcheck source=/dev/null
source "$comp"
usage_block() { _loom_usage_block "$(cat "$1")" "$2"; } # HELP_FILE HEAD
bad_values() { # WORDS...: every option taking N, DUR or BYTES, given a bad value
	local name="loom $*" opt rc first
	"$loom" "$@" --help >"$out/h" 2>/dev/null
	for opt in $(usage_block "$out/h" "$name" | grep -oE -- '--[a-z][a-z0-9-]*[ =](N|DUR|BYTES)\b' | sed -E 's/[ =].*//' | sort -u); do
		nv=$((nv + 1))
		"$loom" "$@" "$opt" "x7y" >"$out/o" 2>"$out/e"
		rc=$?
		first=$(head -1 "$out/e")
		[ $rc = 2 ] || { echo "cli_walk: FAIL '$name $opt x7y' exits $rc, expected 2"; fail=1; }
		case $first in
		"$name: $opt 'x7y': "?*) ;;
		*) echo "cli_walk: FAIL '$name $opt x7y': first line of stderr '$first' is not \"$name: $opt 'x7y': why\""; fail=1 ;;
		esac
	done
}
check() { # WORDS...: one command line
	local name="loom $*" rc first
	n=$((n + 1))
	"$loom" "$@" --help >"$out/o" 2>"$out/e"
	rc=$?
	[ $rc = 0 ] || { echo "cli_walk: FAIL '$name --help' exits $rc, expected 0"; fail=1; }
	head -1 "$out/o" | grep '^usage: ' >/dev/null || { echo "cli_walk: FAIL '$name --help' prints no usage on stdout"; fail=1; }
	[ ! -s "$out/e" ] || { echo "cli_walk: FAIL '$name --help' writes to stderr: $(head -1 "$out/e")"; fail=1; }
	"$loom" "$@" --no-such-option >"$out/o" 2>"$out/e"
	rc=$?
	[ $rc = 2 ] || { echo "cli_walk: FAIL '$name --no-such-option' exits $rc, expected 2"; fail=1; }
	first=$(head -1 "$out/e")
	case $first in
	"$name: "*--no-such-option*) ;;
	*) echo "cli_walk: FAIL '$name --no-such-option': first line of stderr '$first' does not name '$name' and the option"; fail=1 ;;
	esac
	bad_values "$@"
}
# The commands loom lists, and each one's subcommands from its usage.
check_cmd_help() { # CMD: `loom CMD --help` exits 0 with usage
	"$loom" "$1" --help >"$out/o" 2>"$out/e" || { echo "cli_walk: FAIL 'loom $1 --help' exits $?"; fail=1; }
}
cmds=$("$loom" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
[ -n "$cmds" ] || { echo "cli_walk: FAIL 'loom --help' lists no commands"; exit 1; }
for c in $cmds; do
	check_cmd_help "$c"
	case $c in
	place) check place ;;
	sim) check sim ;;
	topo) for s in discover build show check convert; do check topo "$s"; done ;;
	ckpt) for s in ls verify prune; do check ckpt "$s"; done ;;
	health) for s in check config classify stats probe; do check health "$s"; done ;;
	*) echo "cli_walk: FAIL command '$c' is not walked here: add its subcommands"; fail=1 ;;
	esac
done
"$loom" --version >/dev/null || { echo "cli_walk: FAIL 'loom --version' exits $?"; fail=1; }
# The walk must have found the valued options (a usage format change must not
# make it find none and pass).
[ "$nv" -ge 10 ] || { echo "cli_walk: FAIL only $nv options with a N, DUR or BYTES value found in the usages"; fail=1; }
[ $fail = 0 ] && echo "cli_walk: ok ($n command lines, each with --help and a bad option; $nv bad values)"
exit $fail
