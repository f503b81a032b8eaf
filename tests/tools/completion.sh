#!/bin/bash
# Bash completion for loom (etc/bash-completion/loom), in an interactive
# bash session driven by tmux, as a person types: TAB after a prefix
# completes commands, subcommands, options, option values and file names.
#   completion.sh [LOOM]      (default $LOOM_BUILDDIR/tools/loom)
set -uo pipefail
loom=${1:-${LOOM_BUILDDIR:-.}/tools/loom}
src=${LOOM_SRCDIR:-.}
comp=$src/etc/bash-completion/loom
[ -x "$loom" ] || { echo "completion: $loom: not an executable"; exit 1; }
[ -f "$comp" ] || { echo "completion: no $comp"; exit 1; }
command -v tmux >/dev/null || { echo "completion: FAIL tmux is not installed (scripts/deps.sh installs it)"; exit 1; }
t=$(mktemp -d)
sock="loom-completion-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$t"' EXIT
bindir=$(cd "$(dirname "$loom")" && pwd)
mkdir -p "$t/data"
: >"$t/data/fabric-ndr.out"
tmux -L "$sock" -f /dev/null new-session -d -x 220 -y 50 "env -i HOME=$t HISTFILE= TERM=xterm PATH=$bindir:/usr/bin:/bin bash --norc --noprofile"
keys() { tmux -L "$sock" send-keys "$@"; }
screen() { tmux -L "$sock" capture-pane -p -J; }
fail=0 n=0
keys "PS1='$ '; source '$comp'; cd '$t'" Enter
keys "clear" Enter
# TYPED WANT: type TYPED, press TAB (twice, for a list), expect WANT on the screen.
expect() {
	local typed=$1 want=$2
	n=$((n + 1))
	keys C-u "$typed" Tab Tab
	for _ in $(seq 1 50); do
		screen | grep -F -- "$want" >/dev/null && break
		sleep 0.1
	done
	if ! screen | grep -F -- "$want" >/dev/null; then
		echo "completion: FAIL '$typed<TAB>' shows no '$want':"
		screen | grep -v '^$' | tail -5 | sed 's/^/    /'
		fail=1
	fi
	keys C-u "clear" Enter
	sleep 0.2
}
expect "loom he" '$ loom health '
expect "loom health ch" '$ loom health check '
expect "loom health check --dr" '$ loom health check --drain '
expect "loom health check --ti" '$ loom health check --timeout '
expect "loom topo conv" '$ loom topo convert '
expect "loom topo convert --to gres" '$ loom topo convert --to gres.conf '
expect "loom topo convert --to " 'topology.yaml'
expect "loom topo convert --placeholders " 'guid'
expect "loom topo convert --from data/fab" '$ loom topo convert --from data/fabric-ndr.out '
expect "loom ckpt pr" '$ loom ckpt prune '
expect "loom ckpt prune --dr" '$ loom ckpt prune --dry-run '
expect "loom place --req" '$ loom place --request '
expect "loom " 'topo'
[ "$fail" = 0 ] || { echo "completion: FAIL ($n cases)"; exit 1; }
echo "completion: ok, $n cases in a bash session under tmux"
