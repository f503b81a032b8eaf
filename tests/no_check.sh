#!/bin/sh
# Run by `make check` in a build configured --without-check: the unit tests
# (Check) were not built, so the suite is incomplete and must not pass.
echo "make check: FAIL: configured --without-check: the Check unit tests were not built; install Check (Debian: apt-get install check) and configure again"
exit 99
