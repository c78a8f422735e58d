#!/usr/bin/env bash
# The report pages' script in a real browser, on pages re-rendered from the committed samples and
# test documents (no measurement, so it takes seconds): a run's report.html from a GPU host and
# from a CPU-only one, a simulation's, a run with tree formulations and one with energy on both
# sides (both hand-made), a scaling.html, and a page without Chart.js. Each must build every chart
# it expects and raise no JavaScript error. BrowserReport checks the pages of real runs besides.
#   tests/report_script_browser.sh NBODY_FAIR SOURCE_DIR WORK_DIR CONFIGURED_CHARTJS
# Exit 77 (ctest: skipped) with the reason when no headless Chromium or no Chart.js is installed.
set -euo pipefail
exe=$1
source_dir=$2
work=$3
chartjs=${NBODY_FAIR_CHARTJS:-$4}
skip=77
samples=$source_dir/docs/samples

rm -rf "$work"
mkdir -p "$work"
# shellcheck source=tests/browser_page.sh
source "$(dirname "${BASH_SOURCE[0]}")/browser_page.sh"

# Without Chart.js the script still runs: it counts no chart and records no error.
NBODY_FAIR_CHARTJS="$work/no-such-chart.js" "$exe" report --in "$samples/gpu-host-run/results.json" \
  --out "$work/no-chartjs" >/dev/null
check_page "$work/no-chartjs/report.html" no-charts

skip_charts_without_chartjs
export NBODY_FAIR_CHARTJS="$chartjs"

for sample in gpu-host-run cpu-only-run simulation; do
  "$exe" report --in "$samples/$sample/results.json" --out "$work/$sample" >/dev/null ||
    fail "nbody-fair report of $sample failed"
  check_page "$work/$sample/report.html" charts
done
# Trees beside all-pairs (a hand-made schema-9 file): an accuracy-against-time chart per N.
trees=$source_dir/tests/data/results-schema-9-trees-hand-made.json
"$exe" report --in "$trees" --out "$work/trees" >/dev/null || fail "nbody-fair report of the trees failed"
check_page "$work/trees/report.html" charts
grep -q 'data-kind="accuracyTime"' "$work/trees/report.html" ||
  fail "the trees' page has no accuracy-against-time chart"
# Energy on both sides (a hand-made schema-10 file): the joules-against-time chart.
energy=$source_dir/tests/data/results-schema-10-energy-hand-made.json
"$exe" report --in "$energy" --out "$work/energy" >/dev/null || fail "nbody-fair report of the energy run failed"
check_page "$work/energy/report.html" charts
grep -q 'data-kind="joules"' "$work/energy/report.html" ||
  fail "the energy run's page has no joules-against-time chart"
"$exe" scaling "$samples/two-gpu-scaling/gpus-0-sim" "$samples/two-gpu-scaling/gpus-0-1-sim" \
  --out "$work/scaling" >/dev/null || fail "nbody-fair scaling failed"
check_page "$work/scaling/scaling.html" charts

[ "$failures" -eq 0 ] || { echo "report_script_browser: $failures failures" >&2; exit 1; }
echo "report_script_browser: every page's script ran without error"
