# place man pages.
dist_man_MANS += doc/loom-place.1
