# Man pages.
include doc/topo.mk
include doc/place.mk
include doc/ckpt.mk
include doc/health.mk
