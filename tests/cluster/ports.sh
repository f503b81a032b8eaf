# Free TCP ports for a cluster's daemons (sourced by cluster.sh and the
# consumers tier). pick_ports N uses $dir (the cluster's directory) as the
# seed and die() for errors; both are the caller's.

# Ports with a TCP socket of any state on them (a client's connection on a
# port makes a daemon's bind fail as surely as a listener does), one per line,
# from one look at the socket table.
ports_in_use() { ss -Htan 2>/dev/null | awk '{n = split($4, a, ":"); print a[n]}' | sort -un; }

# A base port with $1 consecutive free ports, chosen from the cluster dir's
# hash, below the kernel's ephemeral range (ip_local_port_range), where
# outgoing connections take their ports.
pick_ports() {
	local want=$1 base lo=32768 span used
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	[ "$lo" -gt 12000 ] || lo=32768
	span=$(( lo - 10000 - want ))
	[ "$span" -gt 0 ] || die "no room for $want ports below the ephemeral range ($lo)"
	base=$(( 10000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % span ))
	used=$(ports_in_use)
	# The first base from the seed, stepping by 211, whose run of ports holds
	# no port in use.
	base=$(echo "$used" | awk -v base="$base" -v want="$want" -v span="$span" '
		$1 != "" { busy[$1] = 1 }
		END {
			for (t = 0; t < 50; t++) {
				ok = 1
				for (i = 0; i < want; i++) if ((base + i) in busy) { ok = 0; break }
				if (ok) { print base; exit }
				base = (base - 10000 + 211) % span + 10000
			}
		}')
	[ -n "$base" ] || die "no $want consecutive free TCP ports found"
	echo "$base"
}
