#!/usr/bin/env bash
# mpirun.sh NP COMMAND...: runs COMMAND on NP MPI ranks, oversubscribed (CI has 2 cores), with
# --allow-run-as-root when run as root (CI is), under a time limit so that a hang fails the test
# instead of stalling CI. Exits 77 (ctest: skipped) with the reason where mpirun is absent.
set -uo pipefail
np=$1
shift
if ! command -v mpirun >/dev/null; then
  echo "mpirun not found: skipping the MPI test (install openmpi-bin)"
  exit 77
fi
flags=(-np "$np" --oversubscribe)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
exec timeout --kill-after=10 "${NBODY_MPI_TEST_SECONDS:-300}" mpirun "${flags[@]}" "$@"
