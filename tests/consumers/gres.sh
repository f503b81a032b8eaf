# The gres.conf check of the consumers tier (sourced by run.sh): loom's
# gres.conf of a machine's file, configured by the real slurmd (slurmd -G).

# gres NAME FILE GPUS LINKS: GPUS is the number of GPUs a person counts in
# FILE, cross-checked with count_gpus.py (which counts them without loom);
# LINKS is a python expression in i and j (two different GPUs) giving the
# NVLink count between them that a person reads in FILE. loom's gres.conf
# must have GPUS GPUs, slurmd must configure GPUS, and every GPU's Links= row
# must be the GPUS counts of the file.
gres() {
	local name=$1 file=$2 gpus=$3 links=$4 d="$dir/gres-$1" port n type counted lines files dev got i row want
	mkdir -p "$d/etc" "$d/dev" "$d/spool" "$d/log" "$d/run" "$d/state"
	if ! counted=$(python3 "$here/count_gpus.py" "$file" 2>"$d/count.err"); then
		no "gres $name: count_gpus.py failed: $(tail -1 "$d/count.err")"
		return
	fi
	if [ "$counted" != "$gpus" ]; then
		no "gres $name: count_gpus.py counts $counted GPUs in ${file##*/}, read by hand $gpus"
		return
	fi
	if ! python3 -c 'import sys
n, f = int(sys.argv[1]), eval("lambda i, j: " + sys.argv[2])
for i in range(n): print(",".join("-1" if i == j else str(int(f(i, j))) for j in range(n)))' "$gpus" "$links" >"$d/links.want" 2>"$d/links.err" ||
		[ "$(wc -l <"$d/links.want")" != "$gpus" ]; then
		no "gres $name: the expected Links= rows could not be made: $(tail -1 "$d/links.err")"
		return
	fi
	if ! "$loom" topo convert --from "$file" --to gres.conf >"$d/gres.loom" 2>"$d/convert.err"; then
		no "gres $name: loom topo convert failed: $(tail -1 "$d/convert.err")"
		return
	fi
	n=$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^NodeName=/) {sub("NodeName=", "", $i); print $i; exit}}' "$d/gres.loom")
	if [ -z "$n" ]; then
		no "gres $name: loom's gres.conf names no node: $(head -1 "$d/gres.loom")"
		return
	fi
	# One line and one device file per GPU.
	lines=$(grep -c 'Name=gpu' "$d/gres.loom")
	files=$(sed -n 's/.*Name=gpu.* File=\([^ ]*\).*/\1/p' "$d/gres.loom" | sort -u | wc -l)
	if [ "$lines" = "$gpus" ] && [ "$files" = "$gpus" ]; then ok "gres $name: loom's gres.conf has the file's $gpus GPUs"
	else no "gres $name: loom's gres.conf has $lines GPU lines with $files device files, the file has $gpus GPUs"; fi
	type=$(sed -n 's/.* Type=\([^ ]*\).*/\1/p' "$d/gres.loom" | head -1)
	while read -r dev; do
		mknod "$d/dev/nvidia$dev" c 195 "$dev" 2>/dev/null || ln -sf /dev/null "$d/dev/nvidia$dev"
	done < <(sed -n 's|.*Name=gpu.* File=/dev/nvidia\([0-9]*\).*|\1|p' "$d/gres.loom")
	# Only the device paths change: slurmd opens the files it is given.
	{ echo "AutoDetect=off"; sed "s|File=/dev/|File=$d/dev/|" "$d/gres.loom"; } >"$d/etc/gres.conf"
	echo "$n" >"$d/nodes"
	port=$(ports_for "$d")
	write_conf "$d" "$d/nodes" "$port"
	sed -i "s|^NodeName=$n .*|& Gres=gpu${type:+:$type}:$gpus|" "$d/etc/slurm.conf"
	if ! SLURM_CONF=$d/etc/slurm.conf timeout 30 "$sbin/slurmd" -G -N "$n" >"$d/slurmd-G.out" 2>&1; then
		no "gres $name: slurmd -G refused loom's gres.conf: $(first_failure "$d/slurmd-G.out")"
		return
	fi
	got=$(grep -c ' Gres Name=gpu .*Count=1 ' "$d/slurmd-G.out")
	if [ "$got" = "$gpus" ]; then ok "gres $name: slurmd $slurm configured the file's $gpus GPUs from loom's gres.conf"; else
		no "gres $name: slurmd configured $got GPUs, the file has $gpus"; fi
	i=0
	while IFS= read -r want; do
		row=$(grep " Gres Name=gpu .* Index=$i " "$d/slurmd-G.out" | sed -n 's/.*Links=\([-0-9,]*\).*/\1/p')
		[ "$row" = "$want" ] || { no "gres $name: GPU $i: slurmd has Links=$row, the file gives $want"; return; }
		i=$((i + 1))
	done <"$d/links.want"
	ok "gres $name: slurmd's Links= of each of the $gpus GPUs are the file's $gpus NVLink counts"
}
