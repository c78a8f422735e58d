#!/usr/bin/env bash
# Installs, from Debian's packages, what nbody-fair needs to build and test and this machine lacks.
# The CUDA toolkit is optional and not installed here: without nvcc the suite builds CPU-only.
# (For GPU nodes with no package registry see stage-offline-deps.sh.)
set -euo pipefail

# ninja-build: the presets' generator, which builds on every core by default. libjs-chart.js:
# Chart.js, inlined into report.html for its charts. chromium-headless-shell: the browser the
# BrowserReport test opens report.html in. nodejs: node, which checks that the pages' script
# parses (ReportScriptLint). libhdf5-dev: the serial HDF5 C library that snapshots
# and initial-condition files use (optional: without it the build goes on, without snapshots).
# libopenmpi-dev and openmpi-bin: MPI for runs decomposed over ranks (`mpirun -np K nbody-fair
# run`) and mpirun for their tests (optional: without them the build goes on, one process only).
# libvalijson-dev: valijson, which checks every results.json read against
# docs/results.schema.json (header-only; required).
packages=(cmake g++ make ninja-build libtbb-dev libxsimd-dev xtl-dev libfmt-dev libbenchmark-dev
          libgtest-dev nlohmann-json3-dev libvalijson-dev libcli11-dev libjs-chart.js
          chromium-headless-shell nodejs libhdf5-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || { echo "install-debian-deps: nothing to install"; exit 0; }
echo "install-debian-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
