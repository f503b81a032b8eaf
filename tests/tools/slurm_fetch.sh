#!/bin/bash
# scripts/slurm.sh fetch: a release that is not in shared/vendor is downloaded
# from its pinned URL and kept only when it is the pinned archive. Tested with
# file:// URLs ($LOOM_SLURM_URL_BASE) and a pin table of a small archive made
# here ($LOOM_SLURM_RELEASES): the right archive is taken; the same contents
# packed by another gzip are taken by their tree; a changed file, a missing
# URL and a release with no pin are refused with a message naming what; an
# archive fetched once is reused. Where shared/vendor is at hand, its archives
# must be the ones pinned in scripts/slurm-releases.tsv.
set -uo pipefail
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
slurm=$src/scripts/slurm.sh
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
for c in curl git tar sha256sum; do command -v "$c" >/dev/null || { echo "FAIL: $c is missing"; exit 1; }; done

# A release archive: a top directory with a configure script and a source file.
mkdir -p "$t/src/slurm-24-11-5-1/src" "$t/web"
printf '#!/bin/sh\necho configured\n' >"$t/src/slurm-24-11-5-1/configure"
chmod 755 "$t/src/slurm-24-11-5-1/configure"
echo 'int main(void) { return 0; }' >"$t/src/slurm-24-11-5-1/src/slurmctld.c"
tar -C "$t/src" -cf - slurm-24-11-5-1 | gzip -n -9 >"$t/web/slurm-24.11.5.tar.gz"
sha=$(sha256sum "$t/web/slurm-24.11.5.tar.gz" | cut -d' ' -f1)
tree=$(mkdir "$t/x" && cd "$t/x" && tar -xzf "$t/web/slurm-24.11.5.tar.gz" --strip-components=1 && git init -q && git add -A && git write-tree)
printf '24.11.5\tslurm-24-11-5-1\tfile:///nonexistent/pinned-url.tar.gz\t%s\t%s\n' "$sha" "$tree" >"$t/releases.tsv"
export LOOM_SLURM_RELEASES=$t/releases.tsv LOOM_VENDOR_DIR=$t/no-vendor LOOM_SLURM_ARCHIVES=$t/archives

# fetch [URL_BASE]: run slurm.sh fetch 24.11.5; output in $t/out, stderr in $t/err.
fetch() { LOOM_SLURM_URL_BASE=${1:-} "$slurm" fetch 24.11.5 >"$t/out" 2>"$t/err"; }

if fetch "file://$t/web"; then
	got=$(cat "$t/out")
	if [ "$got" = "$t/archives/slurm-24.11.5.tar.gz" ] && cmp -s "$got" "$t/web/slurm-24.11.5.tar.gz"; then
		ok "the pinned archive is downloaded and kept in the archive cache"
	else bad "fetch printed '$got', expected the cached copy of the archive"; fi
	grep -q 'downloading file://' "$t/err" || bad "fetch did not say where it downloaded from: $(cat "$t/err")"
else bad "the pinned archive was refused: $(cat "$t/err")"; fi

# Fetched once: taken from the cache, no download (the URL is gone now).
if fetch "file://$t/gone" && ! grep -q downloading "$t/err"; then ok "an archive fetched before is reused"
else bad "the cached archive was not reused: $(cat "$t/err")"; fi
rm -rf "$t/archives"

# The same contents packed by another gzip: another sha256, the same tree.
mkdir -p "$t/web2"
tar -C "$t/src" -cf - slurm-24-11-5-1 | gzip -1 >"$t/web2/slurm-24.11.5.tar.gz"
if fetch "file://$t/web2" && grep -q 'contents are the pinned tree' "$t/err"; then ok "the pinned contents under another gzip are taken by their tree"
else bad "repacked archive: $(cat "$t/err")"; fi
rm -rf "$t/archives"

# One changed file: refused, and nothing is left in the cache.
mkdir -p "$t/web3"
echo 'int main(void) { return 1; }' >"$t/src/slurm-24-11-5-1/src/slurmctld.c"
tar -C "$t/src" -cf - slurm-24-11-5-1 | gzip -n -9 >"$t/web3/slurm-24.11.5.tar.gz"
if fetch "file://$t/web3"; then bad "an archive with a changed file was taken"
elif grep -q 'is not the pinned release: refused' "$t/err" && [ -z "$(ls -A "$t/archives" 2>/dev/null)" ]; then
	ok "a changed archive is refused and not kept: $(tail -1 "$t/err")"
else bad "changed archive: unclear refusal or a file left behind: $(cat "$t/err"); $(ls -A "$t/archives" 2>/dev/null)"; fi

# The pinned URL cannot be reached (no LOOM_SLURM_URL_BASE): a clear refusal naming it.
if fetch; then bad "a missing URL gave an archive"
elif grep -q 'could not download file:///nonexistent/pinned-url.tar.gz' "$t/err"; then ok "an unreachable URL is named: $(tail -1 "$t/err")"
else bad "unreachable URL: $(cat "$t/err")"; fi

# A release with no pin.
: >"$t/releases.tsv"
if fetch "file://$t/web"; then bad "a release with no pin was fetched"
elif grep -q 'has no pin' "$t/err"; then ok "a release with no pin is refused"
else bad "no pin: $(cat "$t/err")"; fi
unset LOOM_SLURM_RELEASES

# shared/vendor's archives are the pinned ones.
vendor=$src/../shared/vendor
if [ -d "$vendor" ]; then
	n=0
	while IFS=$'\t' read -r v _ _ want _; do
		case $v in \#*|'') continue ;; esac
		f=$vendor/slurm-$v.tar.gz
		[ -f "$f" ] || { bad "$f is missing from shared/vendor"; continue; }
		got=$(sha256sum "$f" | cut -d' ' -f1)
		[ "$got" = "$want" ] && n=$((n + 1)) || bad "$f: sha256 $got, pinned $want"
	done <"$src/scripts/slurm-releases.tsv"
	ok "$n archives in shared/vendor are the pinned ones"
else
	echo "note: no shared/vendor beside $src: the vendored archives were not compared with the pins"
fi
[ $fails = 0 ] && echo "slurm_fetch: passed" || echo "slurm_fetch: $fails failed"
[ $fails = 0 ]
