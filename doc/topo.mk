# topo man pages.
dist_man_MANS += doc/loom-topo.1 doc/loom-topology.5
