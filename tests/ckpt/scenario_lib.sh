# Helpers for the ckpt cluster scenarios (tests/cluster/scenarios/*_ckpt_*.sh),
# sourced after tests/cluster/lib.sh.

# ckpt_site [KEY=VALUE...]: point spank_ckpt at a checkpoint root in the
# scenario's scratch directory, with short intervals and margins for tests.
# slurmstepd and sbatch read plugstack.conf per job, so no restart is needed.
ckpt_site() {
	CK_SCRATCH=$(scratch)
	CK_ROOT=$CK_SCRATCH/ckpt
	mkdir -p "$CK_ROOT"
	chmod 1777 "$CK_ROOT"
	local conf=$LOOM_CLUSTER_DIR/etc/plugstack.conf so helper
	so=$(awk '$2 ~ /spank_ckpt\.so$/ { print $2 }' "$conf")
	[ -n "$so" ] || fail "spank_ckpt.so is not in $conf (is it built in $LOOM_BUILDDIR?)"
	# The cluster's helper= (the build tree's loom-ckpt-helper) stays.
	helper=$(awk '$2 ~ /spank_ckpt\.so$/ { for (i = 3; i <= NF; i++) if ($i ~ /^helper=/) print $i }' "$conf")
	grep -v 'spank_ckpt\.so' "$conf" >"$conf.new"
	echo "required $so $helper dir=$CK_ROOT/%u/%j roots=$CK_ROOT interval_min=2s margin_min=20s poll=1s $*" >>"$conf.new"
	mv "$conf.new" "$conf"
	export TRAIN_STEPS=${TRAIN_STEPS:-6000}
}

# ckpt_train NAME [SBATCH_ARGS...]: submit the training program; prints the job id.
ckpt_train() {
	local name=$1
	shift
	submit --job-name="$name" -N1 -o "$CK_SCRATCH/$name.out" "$@" \
		--wrap "exec python3 $LOOM_SRCDIR/tests/ckpt/train.py"
}

# ckpt_final NAME FIELD: a field (sha256, restarts, resumed_from...) of the
# training program's final line.
ckpt_final() {
	sed -n 's/^final //p' "$CK_SCRATCH/$1.out" | tr ' ' '\n' | sed -n "s/^$2=//p" | tail -1
}

# ckpt_wait_commit JOBID [TIMEOUT]: wait for the job's first committed checkpoint.
ckpt_wait_commit() {
	wait_file "$CK_ROOT/root/$1/latest" "${2:-60}"
}

# ckpt_compare NAME_REF NAME_RUN WHAT: check bitwise identical weights; print the side-by-side line.
ckpt_compare() {
	local a b r
	a=$(ckpt_final "$1" sha256)
	b=$(ckpt_final "$2" sha256)
	r=$(ckpt_final "$2" restarts)
	[ -n "$a" ] || { cat "$CK_SCRATCH/$1.out" >&2; fail "$1 printed no final checksum"; }
	[ -n "$b" ] || { cat "$CK_SCRATCH/$2.out" >&2; fail "$2 printed no final checksum"; }
	echo "checksum uninterrupted $a | $3 $b (restarts $r) : $([ "$a" = "$b" ] && echo IDENTICAL || echo DIFFERENT)"
	[ "$a" = "$b" ] || fail "weights differ after $3"
}

# ckpt_requeue JOBID: scontrol requeue, tried a few times (slurmctld
# sometimes answers a requeue with a transient error).
ckpt_requeue() {
	for _ in 1 2 3 4 5; do
		scontrol requeue "$1" && return 0
		nap 1
	done
	fail "scontrol requeue $1 refused"
}

# admin_note JOBID PREFIX: the segment of the job's AdminComment that starts
# with PREFIX ("loom: " jobcomp/health's, "loom ckpt: " spank_ckpt's; the
# segments are " | "-separated: lib/util/admin_comment.hpp), empty if none.
admin_note() {
	scontrol show job "$1" | sed -n 's/^ *AdminComment=//p' | sed 's/ *$//' |
		awk -v p="$2" 'BEGIN { RS = " [|] " } index($0, p) == 1 { sub(/\n$/, ""); print; exit }'
}
# admin_notes_kept JOBID: fail unless the AdminComment holds both loom notes
# (a restart note must not erase the checkpoint note, nor the reverse).
admin_notes_kept() {
	local all
	all=$(scontrol show job "$1" | sed -n 's/^ *AdminComment=//p')
	[ -n "$(admin_note "$1" "loom ckpt: ")" ] && [ -n "$(admin_note "$1" "loom: ")" ] ||
		fail "job $1: AdminComment does not hold both loom's restart note and its checkpoint note: '$all'"
}

# The standby scenarios (tests/cluster/scenarios/7*_standby_*.sh):
# standby_site [KEY=VALUE...]: ckpt_site plus what the keeper runs.
standby_site() {
	ckpt_site "standby_dir=$LOOM_CLUSTER_DIR/run/loom-ckpt" "scontrol=$(command -v scontrol)" \
		"loom=$(realpath "$LOOM_BUILDDIR/tools/loom")" "$@"
}
# standby_ranks NAME SBATCH_ARGS...: 4 whole nodes x 2 ranks of
# tests/ckpt/train_ranks.py, srun per rank, output in $CK_SCRATCH/NAME.out;
# prints the job id.
standby_ranks() {
	local name=$1
	shift
	submit --job-name="$name" -N4 --ntasks-per-node=2 --exclusive -o "$CK_SCRATCH/$name.out" --open-mode=append \
		--ckpt "$@" --wrap "export TRAIN_BARRIER_DIR=$CK_SCRATCH/barrier.\$SLURM_JOB_ID; \
exec srun --kill-on-bad-exit=1 /usr/bin/python3 $LOOM_SRCDIR/tests/ckpt/train_ranks.py"
}
# standby_finals NAME: "rank R sha256=H" per rank, sorted, from NAME's output.
standby_finals() {
	grep -o 'rank [0-9]* final step=[0-9]* sha256=[0-9a-f]*' "$CK_SCRATCH/$1.out" | sed 's/ final step=[0-9]*//' | sort
}
