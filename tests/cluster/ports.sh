# Free TCP ports for a cluster's daemons (sourced by cluster.sh and the
# consumers tier). pick_ports N uses $dir (the cluster's directory) as the
# seed and die() for errors; both are the caller's.

# Free: no TCP socket of any state on it (a client's connection on a port
# makes a daemon's bind fail as surely as a listener does).
port_free() { ! ss -Htan "sport = :$1" 2>/dev/null | grep . >/dev/null; }

# A base port with $1 consecutive free ports, chosen from the cluster dir's
# hash, below the kernel's ephemeral range (ip_local_port_range), where
# outgoing connections take their ports.
pick_ports() {
	local want=$1 base i ok tries lo=32768 span
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	[ "$lo" -gt 12000 ] || lo=32768
	span=$(( lo - 10000 - want ))
	base=$(( 10000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % span ))
	for tries in $(seq 1 50); do
		ok=1
		for i in $(seq 0 $((want - 1))); do
			port_free $((base + i)) || { ok=0; break; }
		done
		[ $ok = 1 ] && { echo "$base"; return 0; }
		base=$(( (base - 10000 + 211) % span + 10000 ))
	done
	die "no $want consecutive free TCP ports found"
}
