# health sample configs.
loom_sysconf_DATA += etc/health.conf
EXTRA_DIST += etc/health.conf
