# Sample configuration: installed under $(sysconfdir)/loom, never into
# /etc/slurm; SPANK snippets under $(datadir)/loom/plugstack.conf.d, not active.
loom_sysconf_DATA += etc/slurm.conf.loom etc/loom-topo.conf
loom_plugstack_DATA += etc/plugstack.conf.d/loom-place.conf
EXTRA_DIST += etc/slurm.conf.loom etc/loom-topo.conf etc/plugstack.conf.d/loom-place.conf
# Bash completion, where bash-completion looks for it (on demand, by command name).
bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = etc/bash-completion/loom
include etc/topo.mk
include etc/place.mk
include etc/ckpt.mk
include etc/health.mk
