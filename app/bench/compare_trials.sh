#!/usr/bin/env bash
# The experiment behind the CI recipe for `compare` (docs/compare.md): back-to-back default runs of one
# build on one machine, unchanged (U) and with one formulation slowed by a known, real amount of
# work (S: 10%, F: 5%, through `run --extra-work`), interleaved so that the machine's drift falls
# on both kinds alike. app/bench/compare_trials.py then compares them pair by pair.
#
#   app/bench/compare_trials.sh OUTDIR [UNCHANGED_RUNS [SLOWED_RUNS [FIVE_PERCENT_RUNS]]]
#
# Each run has a cache of its own, so it measures its ceilings itself (compare's control); the
# formulation slowed is SLOWED (cpu.simd by default); NBODY_FAIR is the program (build/release's);
# RUN_ARGS are the CI recipe's options to `run` (default: its fixed sizes, so that every
# formulation is measured at three sizes).
set -u
out=$1
unchanged=${2:-10} slowed=${3:-20} five=${4:-5}
program=${NBODY_FAIR:-$PWD/build/release/nbody-fair}
target=${SLOWED:-cpu.simd}
read -r -a run_args <<<"${RUN_ARGS---sizes 1K,4K,16K}"
mkdir -p "$out"
run() {  # TAG [ARGS...]
  local tag=$1
  shift
  export NBODY_FAIR_CACHE_DIR=$out/cache-$tag
  local start
  start=$(date +%s.%N)
  "$program" run --out "$out/$tag" "${run_args[@]}" "$@" >"$out/$tag.log" 2>&1
  echo "$tag rc=$? $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s $(date +%T)" \
    >>"$out/progress.txt"
  rm -rf "$NBODY_FAIR_CACHE_DIR"
}
for ((i = 1; i <= unchanged || i <= slowed || i <= five; ++i)); do
  tag=$(printf %02d "$i")
  ((i <= unchanged)) && run "U$tag"
  ((i <= slowed)) && run "S$tag" --extra-work "$target=10%"
  ((i <= five)) && run "F$tag" --extra-work "$target=5%"
done
echo finished >>"$out/progress.txt"
