# How the consumers tier counts its checks (sourced by run.sh): ok and no
# count one check each (no also keeps its message for the summary), relay
# turns a checker's output into checks, py runs a python helper whose
# failure is a failed check. checks, failed and failures are run.sh's.

ok() { echo "ok: $*"; checks=$((checks + 1)); }
no() { echo "FAIL: $*"; checks=$((checks + 1)); failed=$((failed + 1)); failures+=("$*"); }
# relay NAME OUT RC [STRIP]: a checker's output OUT (stdout and stderr), which
# exited RC, as checks: each "ok: " line one ok, each "FAIL: " line one
# failure (STRIP, such as the file name it prefixes, cut from both). The
# checker itself fails the check when it crashed (a traceback, an exit status
# other than 0 or 1, or 1 with no FAIL line), when it exited 0 after a FAIL,
# or when it printed no ok: line at all, nor a FAIL line (it checked nothing).
relay() {
	local name=$1 out=$2 rc=$3 strip=${4:-} line oks=0 fails=0 msg
	while IFS= read -r line; do
		msg=${line#*: }
		[ -z "$strip" ] || msg=${msg#"$strip"}
		case $line in
		ok:*) ok "$name: $msg"; oks=$((oks + 1)) ;;
		FAIL:*) no "$name: $msg"; fails=$((fails + 1)) ;;
		esac
	done <"$out"
	if grep -q '^Traceback' "$out" || [ "$rc" -gt 1 ] || { [ "$rc" = 1 ] && [ $fails = 0 ]; }; then
		no "$name: the checker crashed (exit $rc): $(grep -v '^ ' "$out" | tail -1)"
	elif [ "$rc" = 0 ] && [ $fails -gt 0 ]; then
		no "$name: the checker printed $fails FAIL lines but exited 0"
	elif [ $((oks + fails)) = 0 ]; then
		msg=$(tail -1 "$out")
		no "$name: the checker printed no ok: line: it checked nothing${msg:+ ($msg)}"
	fi
}
# py NAME OUT ARGS...: python3 ARGS with its stdout in OUT; a failure (exit
# status, traceback on stderr in OUT.err) or an empty OUT is a failed check.
py() {
	local name=$1 out=$2
	shift 2
	if ! python3 "$@" >"$out" 2>"$out.err"; then
		no "$name: python3 ${1##*/} failed: $(tail -1 "$out.err")"
		return 1
	fi
	grep -q . "$out" || { no "$name: python3 ${1##*/} wrote nothing"; return 1; }
}
