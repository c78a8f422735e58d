#!/usr/bin/env bash
# One device call's worth of GPU work, run from the repository root on the GPU host: build, SASS of
# the tuned kernels, the GPU tests, the benchmarks (and tuned variants), compute-sanitizer.
#
#   gpu/bench/run_on_device.sh OUTDIR [STAGE...]
#   stages: sass test ctest bench variants ncu sanitize fair
#
# Logs go to OUTDIR (few files: the device returns at most 8). BENCH_REPS, BENCH_MIN_TIME and
# FAIR_TIMEOUT shorten the bench and nbody-fair stages. The offline dependencies are those
# third_party/stage-offline-deps.sh unpacked into third_party/prefix.
set -u
out=$1
shift
stages=" $* "
export PFX=$PWD/third_party/prefix/usr
export LD_LIBRARY_PATH=$PFX/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
build=build-dev
log=$out/log.txt
has() { [[ $stages == *" $1 "* ]]; }
stage() { echo "=== $1 ($(date +%T))" | tee -a "$log"; }

stage "device"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,driver_version \
  --format=csv >>"$log" 2>&1
targets="gpu_formulations_test nbody-gpu-bench"
has fair && targets="$targets nbody-fair"
stage "build $targets"
{
  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PFX" \
    -DCMAKE_CUDA_ARCHITECTURES=90 &&
    cmake --build $build -j16 --target $targets
} >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

if has sass; then
  stage "sass"
  cuobjdump --dump-sass $build/gpu/CMakeFiles/nbody_gpu.dir/tuned.cu.o | gzip >"$out/tuned.sass.gz"
fi
if has test; then
  stage "gpu_formulations_test"
  timeout 300 $build/tests/gpu_formulations_test >"$out/test.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure" "$out/test.log" | head -30 | tee -a "$log"
fi
if has ctest; then
  stage "ctest -R Gpu"
  timeout 400 ctest --test-dir $build -R 'Gpu' -j4 -V >"$out/ctest.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  tail -5 "$out/ctest.log" | tee -a "$log"
fi
bench=$build/gpu/bench/nbody-gpu-bench
if has bench; then
  stage "bench"
  timeout 240 $bench --impl '^gpu' --sizes 16384,65536,1048576 \
    --benchmark_min_time="${BENCH_MIN_TIME:-0.3}" --benchmark_repetitions="${BENCH_REPS:-3}" \
    --benchmark_report_aggregates_only=true >"$out/bench.log" 2>&1
  echo "rc=$?" | tee -a "$log"
fi
if has variants; then
  stage "tuned variants (SM clock and power sampled every 200 ms into clocks.csv)"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 200 \
    >"$out/clocks.csv" 2>&1 &
  sampler=$!
  timeout 120 $bench --impl '^gpu\.tuned(\[|$)' --variants --scope kernel --sizes 16384,65536,1048576 \
    --benchmark_min_time=0.3 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    >>"$out/bench.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  kill $sampler
  grep -E "_median" "$out/bench.log" | awk '{print $1, $2, $3}' | tee -a "$log"
  nvidia-smi -q -d PERFORMANCE >>"$log" 2>&1
fi
if has ncu; then
  stage "ncu: gpu.shared and gpu.tuned kernels at N = 65536, clocks left alone"
  timeout 200 ncu --clock-control none -k 'regex:tuned_forces|shared_forces' --launch-count 4 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats --section InstructionStats \
    --metrics sm__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active \
    $build/gpu/bench/nbody-gpu-bench --impl 'gpu\.(shared|tuned)$' --sizes 65536 --iterations 1 \
    --scope kernel >"$out/ncu.txt" 2>&1
  echo "rc=$?" | tee -a "$log"
fi
if has sanitize; then
  for tool in memcheck racecheck synccheck initcheck; do
    stage "compute-sanitizer --tool $tool"
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 \
      $bench --impl '^gpu' --sizes 1,31,4097 --iterations 1 >"$out/sanitize-$tool.txt" 2>&1
    echo "rc=$?" | tee -a "$log"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error" "$out/sanitize-$tool.txt" | sort | uniq -c |
      head -10 | tee -a "$log"
  done
  cat "$out"/sanitize-*.txt >"$out/sanitize.log" && rm "$out"/sanitize-*.txt
fi
if has fair; then
  stage "nbody-fair run"
  timeout "${FAIR_TIMEOUT:-400}" $build/nbody-fair run --impl '^gpu' --sizes 16384,65536,1048576 --out "$out/run" \
    >>"$log" 2>&1
  echo "rc=$?" | tee -a "$log"
fi
stage "done"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv >>"$log" 2>&1
cat "$log"
