#!/bin/sh
# Generate configure and Makefile.in (they are not kept in git).
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf --install --force --warnings=all "$@"
