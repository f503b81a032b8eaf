# topo man pages: appended by the topo part.
