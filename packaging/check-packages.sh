#!/bin/bash
# Check the packages `make rpm` and `make deb` built: the files each one holds,
# the exact-version dependency of the slurmctld plugins, and debug symbols.
#   packaging/check-packages.sh BUILDDIR
set -uo pipefail
b=${1:?usage: check-packages.sh BUILDDIR}
problems=0
bad() { echo "packages: PROBLEM: $*" >&2; problems=$((problems + 1)); }
src=$(cd "$(dirname "$0")/.." && pwd)
# Every man page of doc/ is in one of the two packages (LIST: their file lists).
man_pages_in() {
	local list=$1 kind=$2 p n
	for p in "$src"/doc/*.[1-8]; do
		n=$(basename "$p")
		grep "/usr/share/man/man${n##*.}/$n" >/dev/null <<<"$list" || bad "$kind packages lack the $n man page"
	done
}
# The Python SDK: every module of sdk/python/loom_ckpt/ in the package LIST
# (its file list), under DIR, the directory python3 imports it from, with the
# wheel's dist-info of this version; nothing left in /usr/share/loom/python.
python_sdk_in() {
	local list=$1 kind=$2 dir=$3 m n
	for m in "$src"/sdk/python/loom_ckpt/*.py; do
		n=$(basename "$m")
		grep -F "$dir/loom_ckpt/$n" >/dev/null <<<"$list" || bad "$kind package lacks $dir/loom_ckpt/$n (the Python SDK)"
	done
	grep -E "$dir/loom_ckpt-$version\.dist-info/METADATA\$" >/dev/null <<<"$list" ||
		bad "$kind package lacks $dir/loom_ckpt-$version.dist-info (the Python SDK's metadata)"
	grep '/usr/share/loom/python' >/dev/null <<<"$list" && bad "$kind package still has /usr/share/loom/python"
}
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$b/Makefile")
# The release the build tree was configured for, and where it is installed.
slurm_upstream=$(sed -n 's/^SLURM_VERSION_STRING = //p' "$b/Makefile")
slurm_prefix=$(sed -n 's/^SLURM_PREFIX = //p' "$b/Makefile")
slurm_next=$(sed -n 's/^SLURM_VERSION_NEXT_MICRO = //p' "$b/Makefile")
slurm_api=$(sed -n 's/^SLURM_API_FAMILY = //p' "$b/Makefile")
[ -n "$slurm_upstream" ] || { echo "packages: $b/Makefile names no Slurm release" >&2; exit 1; }
if [ "$slurm_prefix" = /usr ]; then rpm_pd=/slurm; deb_pd=slurm-wlm; else rpm_pd=$slurm_prefix/lib/slurm; deb_pd=$slurm_prefix/lib/slurm; fi

# ---- rpm
rpms=("$b"/rpmbuild/RPMS/*/*.rpm)
main=$(ls "$b"/rpmbuild/RPMS/*/loom-[0-9]*.rpm 2>/dev/null | head -1)
ctld=$(ls "$b"/rpmbuild/RPMS/*/loom-slurmctld-[0-9]*.rpm 2>/dev/null | head -1)
dbg=$(ls "$b"/rpmbuild/RPMS/*/loom-debuginfo-*.rpm 2>/dev/null | head -1)
[ -n "$main" ] || bad "no loom rpm in $b/rpmbuild/RPMS (found: ${rpms[*]})"
[ -n "$ctld" ] || bad "no loom-slurmctld rpm"
[ -n "$dbg" ] || bad "no loom-debuginfo rpm (debug symbols must be kept)"
if [ -n "$main" ] && [ -n "$ctld" ]; then
	main_files=$(rpm -qlp "$main" 2>/dev/null)
	ctld_files=$(rpm -qlp "$ctld" 2>/dev/null)
	case $(basename "$main") in *slurm${slurm_upstream}*) ;; *) bad "rpm Release does not carry Slurm $slurm_upstream: $(basename "$main")" ;; esac
	echo "$main_files" | grep -x /usr/bin/loom >/dev/null || bad "loom rpm lacks /usr/bin/loom"
	echo "$main_files" | grep "$rpm_pd/spank_ckpt.so\$" >/dev/null || bad "loom rpm lacks spank_ckpt.so"
	# spank_ckpt executes its helper from slurmstepd: same package, plain 0755, never set-id.
	echo "$main_files" | grep -x /usr/libexec/loom/loom-ckpt-helper >/dev/null ||
		bad "loom rpm lacks /usr/libexec/loom/loom-ckpt-helper (spank_ckpt's helper)"
	helper_mode=$(rpm -qlvp "$main" 2>/dev/null | awk '$NF == "/usr/libexec/loom/loom-ckpt-helper" { print $1 }')
	[ -z "$helper_mode" ] || [ "$helper_mode" = -rwxr-xr-x ] ||
		bad "loom rpm: loom-ckpt-helper has mode $helper_mode, not -rwxr-xr-x (it must not be set-id)"
	echo "$main_files" | grep "$rpm_pd/spank_place.so\$" >/dev/null || bad "loom rpm lacks spank_place.so"
	echo "$main_files" | grep "$rpm_pd/loom_fabric.so\$" >/dev/null || bad "loom rpm lacks loom_fabric.so (spank_place's rank order)"
	echo "$main_files" | grep '^/usr/share/man/man1/loom.1' >/dev/null || bad "loom rpm lacks the loom(1) man page"
	echo "$main_files" | grep -x /usr/share/bash-completion/completions/loom >/dev/null || bad "loom rpm lacks the bash completion"
	# %{python3_sitelib}: /usr/lib/python3.X/site-packages (Fedora, EL; on a
	# Debian host the spec asks python3 for the same posix_prefix path).
	rpm_site=$(echo "$main_files" | sed -n 's|^\(/usr/lib\(64\)\{0,1\}/python3\.[0-9]*/site-packages\)/loom_ckpt/__init__\.py$|\1|p' | head -1)
	if [ -n "$rpm_site" ]; then
		python_sdk_in "$main_files" rpm "$rpm_site"
	else
		bad "loom rpm lacks loom_ckpt/__init__.py in a python3 site-packages (/usr/lib/python3.X/site-packages)"
	fi
	man_pages_in "$main_files
$ctld_files" rpm
	echo "$ctld_files" | grep "$rpm_pd/jobcomp_health.so\$" >/dev/null || bad "loom-slurmctld rpm lacks jobcomp_health.so"
	echo "$ctld_files" | grep "$rpm_pd/select_topo.so\$" >/dev/null || bad "loom-slurmctld rpm lacks select_topo.so"
	echo "$ctld_files" | grep "$rpm_pd/job_submit_loom.so\$" >/dev/null || bad "loom-slurmctld rpm lacks job_submit_loom.so"
	if [ "$slurm_api" = 2505 ]; then
		echo "$ctld_files" | grep "$rpm_pd/select_topo_cons_tres.so\$" >/dev/null || bad "loom-slurmctld rpm lacks select_topo_cons_tres.so (25.05+)"
	fi
	rpm -qp --qf '%{LICENSE}' "$ctld" 2>/dev/null | grep 'GPL-2.0-or-later' >/dev/null ||
		bad "loom-slurmctld rpm does not state the GPL of the Slurm code it is built with: $(rpm -qp --qf '%{LICENSE}' "$ctld")"
	printf "%s\n%s\n" "$main_files" "$ctld_files" | grep '\.la$' >/dev/null && bad "rpm ships libtool .la files"
	echo "$main_files" | grep '^/etc/slurm' >/dev/null && bad "rpm writes into /etc/slurm (plugstack snippet must not be active)"
	echo "$main_files" | grep '/usr/share/loom/plugstack.conf.d/' >/dev/null || bad "rpm lacks the plugstack.conf.d snippet"
	rpm -qp --requires "$ctld" 2>/dev/null | grep -x "slurm = $slurm_upstream" >/dev/null ||
		bad "loom-slurmctld rpm does not require slurm = $slurm_upstream: $(rpm -qp --requires "$ctld" 2>/dev/null | grep slurm | tr '\n' ' ')"
	echo "packages: rpm $(basename "$main"): $(rpm -qlp "$main" 2>/dev/null | wc -l) files"
	echo "packages: rpm $(basename "$ctld"): $(rpm -qlp "$ctld" 2>/dev/null | tr '\n' ' ')"
	echo "packages: rpm $(basename "$ctld") requires: $(rpm -qp --requires "$ctld" 2>/dev/null | grep -i slurm | tr '\n' ' ')"
fi

# ---- deb
dmain=$(ls "$b"/pkgbuild/loom_*.deb 2>/dev/null | head -1)
dctld=$(ls "$b"/pkgbuild/loom-slurmctld_*.deb 2>/dev/null | head -1)
ddbg=$(ls "$b"/pkgbuild/loom*-dbgsym_*.deb 2>/dev/null | head -1)
[ -n "$dmain" ] || bad "no loom deb in $b/pkgbuild"
[ -n "$dctld" ] || bad "no loom-slurmctld deb"
[ -n "$ddbg" ] || bad "no -dbgsym deb (debug symbols must be kept)"
if [ -n "$dmain" ] && [ -n "$dctld" ]; then
	dmain_files=$(dpkg-deb -c "$dmain")
	dctld_files=$(dpkg-deb -c "$dctld")
	echo "$dmain_files" | grep '\./usr/bin/loom$' >/dev/null || bad "loom deb lacks /usr/bin/loom"
	echo "$dmain_files" | grep '\./usr/share/bash-completion/completions/loom$' >/dev/null || bad "loom deb lacks the bash completion"
	# The Python SDK where Debian's python3 looks (sys.path), and importable from there.
	python_sdk_in "$dmain_files" deb /usr/lib/python3/dist-packages
	/usr/bin/python3 -c 'import sys; sys.exit(0 if "/usr/lib/python3/dist-packages" in sys.path else 1)' 2>/dev/null ||
		bad "/usr/lib/python3/dist-packages is not in /usr/bin/python3's sys.path"
	dx=$(mktemp -d) && dpkg-deb -x "$dmain" "$dx" && {
		got=$(cd "$dx" && PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -I -c 'import sys; sys.path.insert(0, sys.argv[1]); import loom_ckpt; print(loom_ckpt.__version__, loom_ckpt.__file__)' "$dx/usr/lib/python3/dist-packages" 2>&1)
		case $got in
			"$version $dx/usr/lib/python3/dist-packages/loom_ckpt/__init__.py") ;;
			*) bad "the loom deb's loom_ckpt does not import as version $version from /usr/lib/python3/dist-packages: $got" ;;
		esac
	}
	rm -rf "$dx"
	man_pages_in "$dmain_files
$dctld_files" deb
	echo "$dmain_files" | grep "$deb_pd/spank_ckpt.so\$" >/dev/null || bad "loom deb lacks spank_ckpt.so"
	echo "$dmain_files" | grep '\./usr/libexec/loom/loom-ckpt-helper$' >/dev/null ||
		bad "loom deb lacks /usr/libexec/loom/loom-ckpt-helper (spank_ckpt's helper)"
	dhelper_mode=$(echo "$dmain_files" | awk '$NF == "./usr/libexec/loom/loom-ckpt-helper" { print $1 }')
	[ -z "$dhelper_mode" ] || [ "$dhelper_mode" = -rwxr-xr-x ] ||
		bad "loom deb: loom-ckpt-helper has mode $dhelper_mode, not -rwxr-xr-x (it must not be set-id)"
	echo "$dctld_files" | grep "$deb_pd/select_topo.so\$" >/dev/null || bad "loom-slurmctld deb lacks select_topo.so"
	echo "$dctld_files" | grep "$deb_pd/jobcomp_health.so\$" >/dev/null || bad "loom-slurmctld deb lacks jobcomp_health.so"
	echo "$dctld_files" | grep "$deb_pd/job_submit_loom.so\$" >/dev/null || bad "loom-slurmctld deb lacks job_submit_loom.so"
	echo "$dmain_files" | grep "$deb_pd/spank_place.so\$" >/dev/null || bad "loom deb lacks spank_place.so"
	echo "$dmain_files" | grep "$deb_pd/loom_fabric.so\$" >/dev/null || bad "loom deb lacks loom_fabric.so (spank_place's rank order)"
	if [ "$slurm_api" = 2505 ]; then
		echo "$dctld_files" | grep "$deb_pd/select_topo_cons_tres.so -> select_topo.so\$" >/dev/null ||
			bad "loom-slurmctld deb lacks select_topo_cons_tres.so (25.05+)"
	fi
	case $(basename "$dmain") in *slurm${slurm_upstream}*) ;; *) bad "deb version does not carry Slurm $slurm_upstream: $(basename "$dmain")" ;; esac
	echo "$dmain_files" | grep 'select_topo.so$' >/dev/null && bad "the loom deb holds select_topo.so (belongs in loom-slurmctld)"
	printf "%s\n%s\n" "$dmain_files" "$dctld_files" | grep '\.la$' >/dev/null && bad "deb ships libtool .la files"
	echo "$dmain_files" | grep '\./etc/slurm' >/dev/null && bad "deb writes into /etc/slurm"
	dep=$(dpkg-deb -f "$dctld" Depends)
	if [ "$slurm_prefix" = /usr ]; then
		echo "$dep" | grep -F "slurm-wlm-basic-plugins (>= $slurm_upstream), slurm-wlm-basic-plugins (<< $slurm_next)" >/dev/null ||
			bad "loom-slurmctld deb does not pin slurm-wlm-basic-plugins to $slurm_upstream: $dep"
		# The pin must accept the installed Debian revision and nothing of another release.
		inst=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins 2>/dev/null || true)
		if [ -n "$inst" ]; then
			dpkg --compare-versions "$inst" ge "$slurm_upstream" && dpkg --compare-versions "$inst" lt "$slurm_next" ||
				bad "the installed slurm-wlm-basic-plugins $inst does not satisfy the pin"
		fi
	fi
	echo "packages: deb $(basename "$dmain"): $(echo "$dmain_files" | grep -vc '/$') files"
	echo "packages: deb $(basename "$dctld"): $(echo "$dctld_files" | awk '{print $6}' | grep -v '/$' | tr '\n' ' ')"
	echo "packages: deb $(basename "$dctld") depends: $dep"
fi
[ $problems = 0 ] && echo "packages: ok"
exit $problems
