# health man pages.
dist_man_MANS += doc/loom-health.1 doc/loom-health.conf.5 doc/jobcomp_health.8
