#!/usr/bin/env bash
# mpirun.sh [--expect-failure PATTERN] NP COMMAND...: runs COMMAND on NP MPI ranks, oversubscribed
# (CI has 2 cores), with --allow-run-as-root when run as root (CI is), under a time limit so that
# a hang fails the test instead of stalling CI. With --expect-failure the job must end on its own
# (not by the time limit) with a non-zero exit and PATTERN in its output. Exits 77 (ctest: skipped)
# with the reason where mpirun is absent.
set -uo pipefail
pattern=""
if [ "${1:-}" = "--expect-failure" ]; then
  pattern=$2
  shift 2
fi
np=$1
shift
if ! command -v mpirun >/dev/null; then
  echo "mpirun not found: skipping the MPI test (install openmpi-bin)"
  exit 77
fi
flags=(-np "$np" --oversubscribe)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
limit=${NBODY_MPI_TEST_SECONDS:-300}
# Under the sanitizers (ASAN_OPTIONS set, as the debug-asan preset's tests have it) ranks run 5 to
# 10 times slower: a limit made for the release build would stop a slow job that is not hung.
[ -n "${ASAN_OPTIONS:-}" ] && limit=$((limit * 5))
if [ -z "$pattern" ]; then
  exec timeout --kill-after=10 "$limit" mpirun "${flags[@]}" "$@"
fi
output=$(timeout --kill-after=10 "$limit" mpirun "${flags[@]}" "$@" 2>&1)
rc=$?
printf '%s\n' "$output"
case $rc in
  0) echo "mpirun.sh: the job was expected to fail but exited 0"; exit 1 ;;
  124 | 137) echo "mpirun.sh: the job hung (stopped after $limit s)"; exit 1 ;;
esac
if ! grep -q -- "$pattern" <<<"$output"; then
  echo "mpirun.sh: the job failed (exit $rc) without '$pattern' in its output"
  exit 1
fi
echo "mpirun.sh: the job failed as expected (exit $rc)"
