# topo sample configs: appended by the topo part.
