#!/bin/bash
# Plugin-load tier, static half: every symbol a loom plugin leaves undefined
# must be provided where Slurm loads it (slurmctld or slurmstepd, libslurmfull,
# or a library the plugin links). A missing one would only show when slurmctld
# first calls it (lazy binding) and kill the daemon; here it fails the build's
# tests instead. It also checks that each plugin exports exactly Slurm's symbols.
# The Slurm is the one configure was pointed at (SLURM_PREFIX, SLURM_LIBDIR
# from make check; Debian's /usr by default).
#   check_symbols.sh [BUILDDIR]
set -uo pipefail
b=${1:-${LOOM_BUILDDIR:-.}}
prefix=${SLURM_PREFIX:-/usr}
if [ -z "${SLURM_LIBDIR:-}" ]; then
	if [ "$prefix" = /usr ]; then SLURM_LIBDIR=/usr/lib/x86_64-linux-gnu/slurm-wlm; else SLURM_LIBDIR=$prefix/lib/slurm; fi
fi
slurmlib=$SLURM_LIBDIR
fail=0
checked=0
defined() { nm -D --defined-only "$@" 2>/dev/null | awk '{print $3}' | sed 's/@.*//'; }

host_syms=$(mktemp)
trap 'rm -f "$host_syms"' EXIT
for f in "$prefix/sbin/slurmctld" "$prefix/sbin/slurmd" "$prefix/sbin/slurmstepd" "$slurmlib/libslurmfull.so"; do
	[ -e "$f" ] || { echo "check_symbols: $f not found (is Slurm installed?)"; exit 1; }
	defined "$f" >>"$host_syms"
done

# The symbols this release's loaders look up (node_select_syms[] and the
# jobcomp and job_submit syms[] of its source tree): every one must be exported.
src=${SLURM_SRC_DIR:-$(sed -n 's/^SLURM_SRC_DIR = //p' "$b/Makefile" 2>/dev/null)}
looked_up() { # FILE ARRAY: the quoted names in 'static const char *ARRAY[] = { ... };'
	awk -v a="$2" '$0 ~ "\\*" a "\\[\\] = \\{" {on=1; next} on && /^};/ {exit} on' "$1" |
		grep -o '"[a-z_]*"' | tr -d '"' | grep -v '^plugin_id$'
}
select_c=$(ls "$src"/src/interfaces/select.c "$src"/src/common/select.c 2>/dev/null | head -1)
jobcomp_c=$(ls "$src"/src/interfaces/jobcomp.c "$src"/src/common/slurm_jobcomp.c 2>/dev/null | head -1)
job_submit_c=$(ls "$src"/src/interfaces/job_submit.c "$src"/src/slurmctld/job_submit.c 2>/dev/null | head -1)

# Every plugin this build was configured to make must be there and checked:
# one missing is a failure, never a smaller pass.
want_plugins=${LOOM_PLUGINS:-$(make -s --no-print-directory -C "$b" print-plugins 2>/dev/null)}
[ -n "$want_plugins" ] || { echo "check_symbols: FAIL cannot tell which plugins $b builds (make print-plugins)"; exit 1; }
for la in $want_plugins; do
	so=$b/$(dirname "$la")/.libs/$(basename "$la" .la).so
	[ -f "$so" ] || { echo "check_symbols: FAIL $(basename "$so") was not built ($so missing)"; fail=1; }
done
for so in "$b"/plugins/*/.libs/*.so; do
	[ -f "$so" ] || continue
	checked=$((checked + 1))
	name=$(basename "$so")
	bad=0
	libs=$(ldd "$so" 2>/dev/null | awk '/=> \//{print $3} /^[ \t]*\//{print $1}')
	provided=$( (cat "$host_syms"; for l in $libs; do defined "$l"; done) | sort -u)
	missing=$(nm -D --undefined-only "$so" | awk '$1=="U"{print $2}' | sed 's/@.*//' | sort -u |
		comm -23 - <(echo "$provided"))
	# A --enable-sanitizers build: the sanitizer runtime's hooks are expected
	# (such a plugin only loads into an instrumented process); the rest is checked.
	san=$(echo "$missing" | grep -cE '^__(asan|ubsan|lsan|sanitizer)_' || true)
	missing=$(echo "$missing" | grep -vE '^__(asan|ubsan|lsan|sanitizer)_' || true)
	[ "$san" = 0 ] || echo "check_symbols: note: $name is a sanitizer build ($san sanitizer hooks left to the runtime)"
	if [ -n "$missing" ]; then
		echo "check_symbols: FAIL $name: undefined and provided by nothing Slurm loads:"
		echo "$missing" | head -20 | sed 's/^/    /'
		bad=1
	fi
	# Select plugins are loaded by slurmd and the client commands too, where
	# slurmctld's own variables do not exist: a data symbol (resolved when
	# the plugin is loaded, not when first used) must come from libslurmfull
	# or a library the plugin links.
	case $name in select_*.so)
		lib_provided=$( (defined "$slurmlib/libslurmfull.so"; for l in $libs; do defined "$l"; done) | sort -u)
		data=$(readelf --dyn-syms -W "$so" | awk '$7 == "UND" && $4 == "OBJECT" {print $8}' | sed 's/@.*//' | sort -u |
			comm -23 - <(echo "$lib_provided"))
		if [ -n "$data" ]; then
			echo "check_symbols: FAIL $name: variables only slurmctld has (slurmd and the clients cannot load it):"
			echo "$data" | head -20 | sed 's/^/    /'
			bad=1
		fi ;;
	esac
	exports=$(defined "$so" | grep -vE '^(_init|_fini|__bss_start|_edata|_end)$' | sort)
	case $name in
	select_*.so) want='^(plugin_name|plugin_type|plugin_version|plugin_id|init|fini|select_p_.*)$' ;;
	jobcomp_*.so) want='^(plugin_name|plugin_type|plugin_version|init|fini|jobcomp_p_.*)$' ;;
	job_submit_*.so) want='^(plugin_name|plugin_type|plugin_version|init|fini|job_submit|job_modify)$' ;;
	spank_*.so) want='^(plugin_name|plugin_type|plugin_version|spank_plugin_version|slurm_spank_.*)$' ;;
	loom_fabric.so) want='^loom_fabric_(abi|step_ranks|free|nccl_env|free_nccl)$' ;; # spank_place's module (fabric_module.hpp)
	*) want='.*' ;;
	esac
	case $name in
	select_*.so) table=$select_c; arr=node_select_syms ;;
	jobcomp_*.so) table=$jobcomp_c; arr=syms ;;
	job_submit_*.so) table=$job_submit_c; arr=syms ;;
	*) table= ;;
	esac
	case $name in
	select_*.so|jobcomp_*.so|job_submit_*.so)
		# An internal plugin whose loader's table cannot be found is not
		# checked: that is a failure, never a pass.
		[ -n "$table" ] || { echo "check_symbols: FAIL $name: no Slurm source tree to read the loader's symbol table from (SLURM_SRC_DIR='$src')"; bad=1; } ;;
	esac
	if [ -n "$table" ]; then
		names=$(looked_up "$table" "$arr")
		if [ -z "$names" ]; then
			echo "check_symbols: FAIL $name: no symbol table '$arr' found in $table (SLURM_SRC_DIR=$src)"
			bad=1
		fi
		# Matched in the shell, no pipe: with pipefail a pipe's SIGPIPE would read as "not exported".
		for sym in $names; do
			[[ $'\n'"$exports"$'\n' == *$'\n'"$sym"$'\n'* ]] ||
				{ echo "check_symbols: FAIL $name does not export $sym, which $(basename "$table") looks up ($(echo "$exports" | wc -l) exports read)"; bad=1; }
		done
		[ $bad = 1 ] || echo "check_symbols: $name exports all $(echo "$names" | wc -w) operations $(basename "$table") looks up"
	fi
	extra=$(echo "$exports" | grep -vE "$want" || true)
	if [ -n "$extra" ]; then
		echo "check_symbols: FAIL $name exports symbols Slurm does not look up:"
		echo "$extra" | head -10 | sed 's/^/    /'
		bad=1
	fi
	[ $bad = 0 ] || fail=1
	[ $bad = 0 ] && echo "check_symbols: ok $name ($(echo "$exports" | wc -l) exports)"
done
if [ $checked = 0 ]; then
	echo "check_symbols: FAIL no plugins built under $b/plugins"
	exit 1
fi
echo "check_symbols: $checked plugins checked ($(wc -w <<<"$want_plugins") configured)"
exit $fail
