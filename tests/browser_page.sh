# Sourced by the browser tests (browser_report.sh, report_script_browser.sh): find headless
# Chromium, open a page in it and check what the page's own script left in the DOM.
# The sourcing script sets `work` (a scratch folder) and `skip` (its exit status for skipped).

browser=""
for candidate in chromium-headless-shell chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null; then browser=$(command -v "$candidate"); break; fi
done
if [ -z "$browser" ]; then
  echo "$(basename "$0" .sh): SKIPPED: no chromium-headless-shell or chromium on the PATH (Debian:" \
    "apt-get install chromium-headless-shell; third_party/install-debian-deps.sh installs it)"
  exit "$skip"
fi
echo "$(basename "$0" .sh): using $browser"

failures=0
fail() {
  echo "$(basename "$0" .sh): FAIL: $*" >&2
  failures=$((failures + 1))
}

# The page as Chromium leaves it after its scripts ran; the flags: no sandbox (root in CI), no GPU,
# a virtual time budget so the scripts finish before the DOM is dumped.
dump_dom() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
    --virtual-time-budget=10000 --dump-dom "file://$1" 2>"$work/browser.log"
}

attribute() {  # attribute NAME BODY_TAG
  sed -n "s/.* $1=\"\\([^\"]*\\)\".*/\\1/p" <<<"$2"
}

# check_page HTML EXPECT: EXPECT is "charts" (every chart built, at least one) or "no-charts".
# Each page must raise no JavaScript error (the page's error recorder lists them in
# data-js-errors) and reference nothing over the network.
check_page() {
  local html=$1 expect=$2 dom body errors built expected
  [ -s "$html" ] || { fail "$html was not written"; return; }
  # Nothing fetched from the network: no src= or href= to http(s).
  if grep -Eoi "(src|href)[[:space:]]*=[[:space:]]*[\"']?https?:" "$html" >/dev/null; then
    fail "$html references a network resource: $(grep -Eoi "(src|href)[[:space:]]*=[[:space:]]*[\"']?https?:[^\"' >]*" "$html" | head -3 | tr '\n' ' ')"
  fi
  dom=$(dump_dom "$html") || { fail "$browser could not load $html: $(tail -5 "$work/browser.log")"; return; }
  body=$(grep -o '<body[^>]*>' <<<"$dom" | head -1)
  [ -n "$body" ] || { fail "no <body> in the DOM of $html"; return; }
  errors=$(attribute data-js-errors "$body")
  built=$(attribute data-charts-built "$body")
  expected=$(attribute data-charts-expected "$body")
  echo "$(basename "$0" .sh): $html: charts built ${built:-?} of ${expected:-?}, JavaScript errors: ${errors:-none}"
  [ -z "$errors" ] || fail "$html: JavaScript errors: $errors"
  [ -n "$expected" ] || fail "$html: the page's script did not run (no data-charts-expected)"
  if [ "$expect" = charts ]; then
    [ "${expected:-0}" -gt 0 ] || fail "$html: no chart expected"
    [ "$built" = "$expected" ] || fail "$html: $built charts built, $expected expected"
  else
    [ "${expected:-x}" = 0 ] || fail "$html: charts expected without Chart.js"
    grep -q 'No charts: Chart.js was not found' <<<"$dom" || fail "$html: no line saying why the charts are absent"
  fi
}

# Without Chart.js at `chartjs` the chart checks cannot run: says so and exits, failed where a page
# without it failed, else with `skip`.
skip_charts_without_chartjs() {
  [ -r "$chartjs" ] && return
  echo "$(basename "$0" .sh): SKIPPED the chart checks: Chart.js not found at $chartjs (Debian:" \
    "apt-get install libjs-chart.js, or set NBODY_FAIR_CHARTJS); the page without it passed" \
    "($failures failures)"
  [ "$failures" -eq 0 ] || exit 1
  exit "$skip"
}
