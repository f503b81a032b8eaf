#!/bin/bash
# loom's shell scripts run under `set -o pipefail` (the cluster scenarios
# inherit it from tests/cluster/run.sh). There, `WRITER | grep -q PATTERN`
# can fail on a line that matches: grep -q exits at the first match, the
# writer takes SIGPIPE on its next write, and pipefail reports the pipeline as
# failed. Bash writes `echo "$var"` a line at a time, so a match on the first
# of several lines is enough (a check once read "required node n3 not in
# n[3-4]"). The rule: a reader in a pipe reads all of its input; a test for a
# match is `grep PATTERN >/dev/null` or `grep -q PATTERN <<<"$var"`.
#   shell_pipes.sh [SRCDIR]     (default $LOOM_SRCDIR)
set -uo pipefail
src=${1:-${LOOM_SRCDIR:-.}}
[ -d "$src/scripts" ] || { echo "shell_pipes: $src: not loom's source tree (no scripts/)"; exit 1; }
n=0 bad=0
while IFS= read -r -d '' f; do
	n=$((n + 1))
	lineno=0
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		[[ $line =~ ^[[:space:]]*# ]] && continue
		if [[ $line =~ \|[[:space:]]*grep[[:space:]]+-[a-zA-Z]*q ]]; then
			echo "shell_pipes: ${f#"$src"/}:$lineno: a pipe into 'grep -q' (under pipefail the writer's SIGPIPE reads as no match): $line"
			bad=$((bad + 1))
		fi
	done <"$f"
done < <(find "$src" \( -name '_build*' -o -name .git -o -name autom4te.cache \) -prune -o \
	-type f \( -name '*.sh' -o -path '*/.ci/run' \) -print0)
[ "$n" -gt 0 ] || { echo "shell_pipes: FAIL no shell scripts found under $src"; exit 1; }
if [ "$bad" -gt 0 ]; then
	echo "shell_pipes: FAIL $bad pipes into 'grep -q' in $n scripts"
	exit 1
fi
echo "shell_pipes: ok, $n scripts, no pipe into 'grep -q'"
