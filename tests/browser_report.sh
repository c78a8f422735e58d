#!/usr/bin/env bash
# report.html in a real browser: a real run (and one with --no-counters), the H100 sample results
# re-rendered, a real simulate and the H100 simulate sample, and pages written without Chart.js. Each page must build every chart it expects
# (the page's own script counts them into data-charts-built / data-charts-expected), raise no
# JavaScript error and reference nothing over the network.
#   tests/browser_report.sh NBODY_FAIR SOURCE_DIR WORK_DIR CONFIGURED_CHARTJS
# Exit 77 (ctest: skipped) with the reason when no headless Chromium or no Chart.js is installed.
set -euo pipefail
exe=$1
source_dir=$2
work=$3
chartjs=${NBODY_FAIR_CHARTJS:-$4}
skip=77

rm -rf "$work"
mkdir -p "$work"
# The suite's cache (reference, ceilings) stays in this test's folder.
export NBODY_FAIR_CACHE_DIR="$work/cache"
# shellcheck source=tests/browser_page.sh
source "$(dirname "${BASH_SOURCE[0]}")/browser_page.sh"

# A page without Chart.js: tables, and one line saying why there are no charts.
NBODY_FAIR_CHARTJS="$work/no-such-chart.js" "$exe" report \
  --in "$source_dir/docs/samples/gpu-host-run/results.json" \
  --out "$work/no-chartjs" >/dev/null
check_page "$work/no-chartjs/report.html" no-charts
NBODY_FAIR_CHARTJS="$work/no-such-chart.js" "$exe" report \
  --in "$source_dir/docs/samples/simulation/results.json" \
  --out "$work/simulate-no-chartjs" >/dev/null
check_page "$work/simulate-no-chartjs/report.html" no-charts

skip_charts_without_chartjs
export NBODY_FAIR_CHARTJS="$chartjs"

# A real run on this machine, with counters where it has them.
"$exe" run --impl 'cpu\.(aos|soa|simd)' --sizes 1K,2K --out "$work/run" >"$work/run.log" 2>&1 ||
  { tail -20 "$work/run.log"; fail "nbody-fair run failed"; }
check_page "$work/run/report.html" charts
# Without counters: the counter charts give way to a line saying why.
"$exe" run --impl 'cpu\.(aos|simd)' --sizes 1K --no-counters --out "$work/run-no-counters" \
  >"$work/run-no-counters.log" 2>&1 || { tail -20 "$work/run-no-counters.log"; fail "nbody-fair run --no-counters failed"; }
check_page "$work/run-no-counters/report.html" charts
# A GPU host's results (the H100 sample: GPU formulations, counters): GPU rooflines, ladders.
"$exe" report --in "$source_dir/docs/samples/gpu-host-run/results.json" \
  --out "$work/h100" >/dev/null
check_page "$work/h100/report.html" charts
grep -q 'GPU roofline' "$work/h100/report.html" || fail "the H100 page has no GPU roofline"
grep -q 'GPU optimization ladder' "$work/h100/report.html" || fail "the H100 page has no GPU ladder"

# simulate, a small real one checking conservation every 8 steps: energy-error curves, step splits.
"$exe" simulate --impl '^cpu\.(soa|tbb)$' --sizes 256 --steps 32 --diag-every 8 \
  --out "$work/simulate" >"$work/simulate.log" 2>&1 ||
  { tail -20 "$work/simulate.log"; fail "nbody-fair simulate failed"; }
check_page "$work/simulate/report.html" charts
grep -q 'data-kind="energy"' "$work/simulate/report.html" || fail "the simulate page has no energy chart"
# The H100 simulate sample (CPU and GPU): the speedups against N and a split at each N.
"$exe" report --in "$source_dir/docs/samples/simulation/results.json" \
  --out "$work/h100-simulate" >/dev/null
check_page "$work/h100-simulate/report.html" charts
grep -q 'data-kind="speedups"' "$work/h100-simulate/report.html" ||
  fail "the H100 simulate page has no speedup chart"

# scaling.html of the two-GPU sample (one GPU, then two): efficiency and split charts.
"$exe" scaling "$source_dir/docs/samples/two-gpu-scaling/gpus-0-run" \
  "$source_dir/docs/samples/two-gpu-scaling/gpus-0-1-run" --out "$work/scaling" >/dev/null ||
  fail "nbody-fair scaling failed"
check_page "$work/scaling/scaling.html" charts
grep -q 'data-kind="scalingEfficiency"' "$work/scaling/scaling.html" ||
  fail "the scaling page has no efficiency chart"

[ "$failures" -eq 0 ] || { echo "browser_report: $failures failures" >&2; exit 1; }
echo "browser_report: every page passed"
