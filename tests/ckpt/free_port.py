"""Print a TCP port free on 127.0.0.1 for a test's rendezvous (torchrun's
--master-port, MASTER_PORT), below the kernel's ephemeral range.

A port the kernel hands out for bind(("", 0)) lies in the ephemeral range,
where every outgoing connection (slurmctld's RPCs, gloo's mesh, a TCPStore
client) takes its local port: between the test closing its probe socket and
the rendezvous listening on it, one of them may take it. Below that range
only a listener takes a port, so a port found free here stays free unless
another test draws the same one at random from some 20,000.
"""

import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768
    return low if low > 12000 else 32768


def free_port(rng=random.SystemRandom()):
    low = ephemeral_low()
    for _ in range(500):
        port = rng.randrange(10000, low)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        return port
    raise SystemExit("free_port: no free port found below %d" % low)


if __name__ == "__main__":
    sys.stdout.write("%d\n" % free_port())
