#!/usr/bin/env bash
# The test suite as README.md gives it: configure, build and run every test of the release preset,
# as many at a time as the machine has cores (tests on the GPU, and those running MPI ranks, hold a
# lock each, so they run one at a time), then why each skipped test skipped, counted: ctest itself
# says only "Skipped". Exits with ctest's status.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
export CTEST_PARALLEL_LEVEL="${CTEST_PARALLEL_LEVEL:-$(nproc)}"
cmake --workflow --preset release
status=$?
log=build/release/Testing/Temporary/LastTest.log
if [ -f "$log" ]; then
  # GoogleTest's reason is the line after "FILE:LINE: Skipped"; shell tests say SKIPPED themselves.
  reasons=$(grep -A1 ': Skipped$' "$log" | grep -v -e ': Skipped$' -e '^--$' | sort | uniq -c)
  shell=$(grep -hE 'SKIPPED: |skipping the MPI test|tests skipped' "$log" | sort -u)
  if [ -n "$reasons$shell" ]; then
    echo "Why tests were skipped (count, reason), from $log:"
    [ -n "$reasons" ] && echo "$reasons"
    [ -n "$shell" ] && echo "$shell"
  fi
fi
exit $status
