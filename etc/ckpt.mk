# ckpt sample configs.
loom_plugstack_DATA += etc/plugstack.conf.d/loom-ckpt.conf
EXTRA_DIST += etc/plugstack.conf.d/loom-ckpt.conf
