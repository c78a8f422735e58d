#!/usr/bin/env bash
# The report pages' JavaScript (reports/assets/*.js, embedded into every page at build time) parses:
# `node --check` on each file, so a syntax error fails here, named with its line, before any page
# is opened. Whether the script runs without errors is ReportScriptBrowser's test.
#   tests/report_script_lint.sh FILE.js...
# Exit 77 (ctest: skipped) with the reason where node is not installed.
set -euo pipefail
skip=77
node=$(command -v node || command -v nodejs || true)
if [ -z "$node" ]; then
  echo "report_script_lint: SKIPPED: no node on the PATH (Debian: apt-get install nodejs;" \
    "third_party/install-debian-deps.sh installs it)"
  exit $skip
fi
failures=0
for file in "$@"; do
  if "$node" --check "$file"; then
    echo "report_script_lint: $file: ok"
  else
    echo "report_script_lint: FAIL: $file does not parse" >&2
    failures=$((failures + 1))
  fi
done
[ "$#" -gt 0 ] || { echo "report_script_lint: FAIL: no file given" >&2; exit 1; }
[ "$failures" -eq 0 ] || exit 1
echo "report_script_lint: $# files parse ($("$node" --version))"
