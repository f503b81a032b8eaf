#!/bin/bash
# Install what loom needs to build, test and run its test cluster on Debian 12,
# unless it is there already. Run as root (or with sudo available).
set -euo pipefail

pkgs=(
	# toolchain and autotools
	g++ make autoconf automake libtool pkg-config
	# nm and readelf for the plugin-load checks (tests/plugins/check_symbols.sh)
	binutils
	# libraries loom builds against (libyaml: Slurm's topology.yaml)
	libjson-c-dev libssl-dev libhwloc-dev libyaml-dev libibverbs-dev check
	# Slurm 22.05 (daemons, clients, headers) and munge; dpkg-dev for `apt-get source`
	slurmctld slurmd slurm-client munge libslurm-dev libmunge-dev dpkg-dev
	# test tools: ss (iproute2), python3 (SDK, training program), clang + runtime (libFuzzer)
	iproute2 python3 clang libclang-rt-14-dev procps
	# hwloc's own tools (lstopo, hwloc-calc): the consumers tier checks the hwloc reader against them
	hwloc
	# tmux: bash completion is tested in a bash session it drives (tests/tools/completion.sh)
	tmux
	# groff: every man page is formatted with warnings on (tests/tools/man_pages.sh)
	groff-base
	# shellcheck: every shell script is checked in make check (tests/tools/shellcheck.sh)
	shellcheck
	# clang-format: every C++ source is checked in make check (tests/tools/clang_format.sh)
	clang-format
	# one compiler cache for every build tree; http-parser (and libyaml) for
	# the Slurm releases built from source (scripts/slurm.sh)
	ccache libhttp-parser-dev
	# a Slurm release missing from shared/vendor is downloaded and checked
	# (scripts/slurm.sh fetch: curl, and git for the archive's tree)
	curl ca-certificates git
	# PyTorch, for the Python SDK's save_torch_async()/load_torch() test (tests/ckpt/sdk_torch.sh)
	python3-torch
	# python3-venv: PyTorch 2.13 for the DCP path, in a venv (scripts/torch-venv.sh),
	# and the fresh venvs the Python SDK's wheel is installed into (tests/ckpt/sdk_wheel.sh)
	python3-venv
	# the Python SDK's wheel, built offline by `make` (sdk/python/pyproject.toml)
	python3-setuptools python3-wheel python3-pip
	# Open MPI: the C++ SDK in an MPI job of 4 ranks (tests/ckpt/ranks_mpi.sh)
	openmpi-bin libopenmpi-dev
	# rsvg-convert: loom sim's SVG plots are rendered by it in the tests (tests/tools/sim_cli.sh)
	librsvg2-bin
	# packaging: make rpm, make deb
	rpm debhelper dh-python fakeroot xz-utils elfutils cpio
)

missing=()
for p in "${pkgs[@]}"; do
	case $p in \#*) continue ;; esac
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "deps: run as root to install: ${missing[*]}" >&2; exit 1; }
	SUDO=sudo
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/loom-deps.log 2>&1 ||
	{ tail -30 /tmp/loom-deps.log >&2; echo "deps: apt-get install failed (log: /tmp/loom-deps.log)" >&2; exit 1; }
# slurm-wlm-emulator takes over the daemons' alternatives and cannot run a normal cluster.
if dpkg-query -W -f='${Status}' slurm-wlm-emulator 2>/dev/null | grep "install ok installed" >/dev/null; then
	$SUDO update-alternatives --set slurmctld /usr/sbin/slurmctld-wlm
	$SUDO update-alternatives --set slurmd /usr/sbin/slurmd-wlm
fi
echo "deps: done"
