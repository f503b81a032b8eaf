# place sample configs: the documented placement weights.
loom_sysconf_DATA += etc/place/weights.conf
EXTRA_DIST += etc/place/weights.conf
