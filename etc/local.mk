# Sample configuration.
include etc/topo.mk
include etc/place.mk
include etc/ckpt.mk
include etc/health.mk
