#!/usr/bin/env bash
# One device call's worth of GPU work, run from the repository root on the GPU host: build, SASS of
# the tuned kernels, the GPU tests, the benchmarks (and tuned variants), compute-sanitizer.
#
#   gpu/bench/run_on_device.sh OUTDIR [STAGE...]
#   stages: default kernelonly simulate sass test ctest asan cupti bench variants ncu source dram
#           sanitize fair gpus gpu-ranks host-test host-run host-big host-sim host-weak host-whole
#   (ctest: the complete test suite, every test with --output-on-failure, on any host (its
#   summary and failures in log.txt); asan: the debug-asan preset's build and complete ctest, with
#   its LeakSanitizer suppressions; default: the default `nbody-fair run`, timed, on a fresh cache; kernelonly: the GPU
#   formulations timed in kernel scope alone at the default sizes, to set beside it; simulate:
#   simulation_test on the GPU, then `nbody-fair simulate` on a Plummer sphere, SIM_ARGS added;
#   gpus: several GPUs, every GPU of the host in one process: the multi-GPU tests (memcheck among
#   them), the links (topo -m; `peaks --gpus all`: the all-gather's sweep, NCCL_DEBUG=INFO's
#   transports), then gpu.tuned on one GPU and on all of them, `run` at GPUS_RUN_SIZES and
#   `simulate` at GPUS_SIM_SIZES (all GPUs also at GPUS_WEAK_RUN_SIZE, G x 1M: weak scaling's
#   pair), and `nbody-fair scaling` over the pairs; gpu-ranks: two MPI ranks, one GPU each, NCCL
#   between them (--gpu-exchange nccl): their tests (nccl_ranks_test under mpirun -np
#   2, then under compute-sanitizer's memcheck on each rank), gpu.tuned's `run` and `simulate` at
#   the same sizes, the same with the host-staged exchange (--gpu-exchange mpi), and one scaling
#   study of all of them beside the one-process runs where this call also ran `gpus` (otherwise
#   `nbody-fair scaling` wherever the folders land); NBODY_EXCHANGE_TRACE=1 on the runs of two
#   GPUs: each evaluation's anatomy (upload, kernel, until gathered, per GPU) in TAG-run.log;
#   NCCL_NVLS_ENABLE=0 throughout, passed to the ranks with mpirun -x;
#   rank-energy: gpu.tuned and cpu.tbb at RANK_ENERGY_SIZES (64K,1M) on two MPI ranks and in one
#   process on as many GPUs, each run's energy records and joules per evaluation in log.txt;
#   host-test host-run host-big host-sim host-weak host-whole: scaling on a host of 4 or 8 GPUs,
#   one device call each where time is short (a call may run at most 10 minutes), gpu.tuned in one
#   process on 1, 2, 4 and 8 of its GPUs (as many as it has): host-test the multi-GPU tests on
#   every GPU and memcheck on 4; host-run strong scaling at HOST_RUN_SIZES (1M,4M); host-big at
#   HOST_BIG_SIZE (16M: one repetition after the validation, --max-eval-seconds 300); host-sim
#   `simulate` at HOST_SIM_SIZES (256K,1M); host-weak HOST_WEAK_PER_GPU (256K) bodies per GPU;
#   host-whole every GPU against every core of the host (gpu.tuned on --gpus all beside cpu.tbb,
#   cpu.tbb.symmetric and their float64 twins, at HOST_WHOLE_SIZES, 64K,256K); each run's folder
#   is packed into OUTDIR/logs.tar.gz, for `nbody-fair scaling` wherever the files land)
#
# log.txt (the summary) goes to OUTDIR; the other logs are packed into OUTDIR/logs.tar.gz at the
# end (the device returns few files). BENCH_REPS, BENCH_MIN_TIME and FAIR_TIMEOUT shorten the bench
# and nbody-fair stages (FAIR_IMPL, FAIR_SIZES choose what it runs; SANITIZE_TOOLS which
# compute-sanitizer tools run); NCU_IMPL and NCU_SIZE pick what ncu profiles (SOURCE_IMPLS, a space-separated
# list, what the per-instruction stall sampling profiles); VARIANTS_IMPL and VARIANT_SIZES narrow
# the variants; TEST_FILTER narrows the test stage; STAGE_TESTS=0 leaves out the gpus and
# gpu-ranks stages' own tests (and the simulate stage's simulation_test); ASAN_CTEST_ARGS narrows the asan stage's ctest. The offline dependencies are those
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
targets="gpu_formulations_test nbody-fair"
has fair && targets="$targets nbody-fair"
has simulate && targets="$targets simulation_test"
has gpus && targets="$targets simulation_test"
has gpu-ranks && targets="$targets nccl_ranks_test"
has rank-energy && targets="$targets nbody-fair"
has host-test && targets="$targets simulation_test"
export NCCL_NVLS_ENABLE=0  # NVLink multicast can take a shared host's GPUs out of service
has ctest && targets=all
has cupti && targets="$targets counters_test"
jobs=$(nproc)
generator=()
command -v ninja >/dev/null && [[ ! -f $build/Makefile ]] && generator=(-G Ninja)
# The release build, unless the asan stage is all this call does (it builds its own).
if [[ $stages != " asan " ]]; then
  stage "build $targets"
  start=$(date +%s)
  {
    cmake -S . -B $build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PFX" \
      -DCMAKE_CUDA_ARCHITECTURES=90 &&
      cmake --build $build -j"$jobs" --target $targets
  } >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  echo "built in $(($(date +%s) - start)) s" | tee -a "$log"
fi

# ctest_summary LOG: ctest's summary line, each failed test, each skip's count and reason.
ctest_summary() {
  grep -E "tests passed|tests failed|Total Test time" "$1" | tee -a "$log"
  grep -E "^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|Not Run)" "$1" |
    tee -a "$log"
  grep -E "\*\*\*Skipped|Skipped$" "$1" | sed 's/.*Test *#[0-9]*: //' | sort | uniq -c |
    head -20 | tee -a "$log"
}

if has default; then
  stage "nbody-fair run with its defaults, timed"
  export NBODY_FAIR_CACHE_DIR=$out/default-cache  # fresh: no reference or ceilings cached
  start=$(date +%s.%N)
  timeout 400 $build/nbody-fair run --out "$out/default" >"$out/default.log" 2>&1
  echo "rc=$? wall $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$log"
  grep -E "planned|took|left out" "$out/default.log" | tee -a "$log"
  tail -3 "$out/default.log" | tee -a "$log"
  rm -rf "$out/default-cache"
  unset NBODY_FAIR_CACHE_DIR
fi
if has kernelonly; then
  stage "GPU formulations in kernel scope alone, the default sizes and repetitions"
  timeout 300 $build/nbody-fair bench --impl '^gpu' --sizes 1K,4K,16K,64K,256K,1M --scope kernel \
    --benchmark_min_time=0.1 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_format=json >"$out/kernel-only.json" 2>"$out/kernel-only.log"
  echo "rc=$?" | tee -a "$log"
  [[ -f $out/default/results.json ]] &&
    python3 gpu/bench/kernel_scope_check.py "$out/default/results.json" "$out/kernel-only.json" |
    tee -a "$log"
fi
if has simulate; then
  if [[ ${STAGE_TESTS:-1} != 0 ]]; then
    stage "simulation_test (GPU formulations included)"
    timeout 200 $build/tests/simulation_test >"$out/simulation_test.log" 2>&1
    echo "rc=$?" | tee -a "$log"
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|dE/E" "$out/simulation_test.log" | tee -a "$log"
  fi
  stage "nbody-fair simulate"
  start=$(date +%s.%N)
  timeout 240 $build/nbody-fair simulate --ic plummer --out "$out/simulate" ${SIM_ARGS:-} \
    >"$out/simulate.log" 2>&1
  echo "rc=$? wall $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$log"
  grep -E "^\| |planned|took" "$out/simulate.log" | tee -a "$log"
fi
if has sass; then
  stage "sass"
  cuobjdump --dump-sass $build/gpu/CMakeFiles/nbody_gpu.dir/formulations/tuned.cu.o >"$out/tuned.sass"
  python3 gpu/bench/sass_loop_stats.py 'tuned_forcesIf' <"$out/tuned.sass" | tee -a "$log"
fi
if has test; then
  stage "gpu_formulations_test"
  timeout 300 $build/tests/gpu_formulations_test --gtest_filter="${TEST_FILTER:-*}" >"$out/test.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure" "$out/test.log" | head -30 | tee -a "$log"
fi
if has cupti; then
  stage "counters_test Cupti.*"
  timeout 200 $build/tests/counters_test --gtest_filter='Cupti.*:GpuPeaks.*' >"$out/cupti.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|copy of|interaction mix" "$out/cupti.log" | tee -a "$log"
fi
if has ctest; then
  stage "ctest: the complete suite (tests on the GPU, or on MPI ranks, hold a lock each)"
  start=$(date +%s)
  # What the call has left of its 10 minutes, unless CTEST_SECONDS says.
  timeout "${CTEST_SECONDS:-$((580 - SECONDS))}" ctest --test-dir $build -j"$jobs" --output-on-failure \
    >"$out/ctest.log" 2>&1
  echo "rc=$? in $(($(date +%s) - start)) s" | tee -a "$log"
  ctest_summary "$out/ctest.log"
fi
if has asan; then
  # The debug-asan preset as CMakePresets.json gives it (its LSAN_OPTIONS among the test
  # environment), pointed at the staged dependencies and this GPU.
  stage "debug-asan preset: build"
  start=$(date +%s)
  {
    cmake --preset debug-asan -DCMAKE_PREFIX_PATH="$PFX" -DCMAKE_CUDA_ARCHITECTURES=90 &&
      cmake --build --preset debug-asan -j"$jobs"
  } >"$out/asan-build.log" 2>&1 || { tail -40 "$out/asan-build.log"; exit 1; }
  echo "built in $(($(date +%s) - start)) s" | tee -a "$log"
  stage "debug-asan preset: ctest"
  start=$(date +%s)
  # ASAN_CTEST_ARGS narrows it (-I 150,0: from test 150 on) where one call cannot hold it all.
  timeout "${ASAN_CTEST_SECONDS:-$((580 - SECONDS))}" ctest --preset debug-asan -j"$jobs" \
    ${ASAN_CTEST_ARGS:-} >"$out/asan-ctest.log" 2>&1
  echo "rc=$? in $(($(date +%s) - start)) s" | tee -a "$log"
  ctest_summary "$out/asan-ctest.log"
  grep -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error" "$out/asan-ctest.log" |
    sort | uniq -c | head | tee -a "$log"
fi
bench="$build/nbody-fair bench"
if has bench; then
  stage "bench"
  timeout 240 $bench --impl '^gpu' --sizes 16384,65536,1048576 --ic plummer --scope kernel,end_to_end \
    --benchmark_min_time="${BENCH_MIN_TIME:-0.3}" --benchmark_repetitions="${BENCH_REPS:-3}" \
    --benchmark_report_aggregates_only=true >"$out/bench.log" 2>&1
  echo "rc=$?" | tee -a "$log"
fi
if has variants; then
  stage "tuned variants (SM clock and power sampled every 200 ms into clocks.csv)"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 200 \
    >"$out/clocks.csv" 2>&1 &
  sampler=$!
  timeout 300 $bench --impl "${VARIANTS_IMPL:-^gpu\.tuned(\[|$)}" --variants --scope kernel \
    --sizes "${VARIANT_SIZES:-16384,65536,1048576}" \
    --benchmark_min_time=0.3 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    >>"$out/bench.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  kill $sampler
  grep -E "_median" "$out/bench.log" | awk '{print $1, $2, $3}' | tee -a "$log"
  nvidia-smi -q -d PERFORMANCE >>"$log" 2>&1
fi
if has ncu; then
  stage "ncu: kernels of ${NCU_IMPL:-gpu.shared and gpu.tuned} at N = ${NCU_SIZE:-65536}, clocks left alone"
  # NCU_IMPL picks the kernels (default: gpu.shared and gpu.tuned); the stall reasons per issued
  # instruction say what the issue slots wait for.
  timeout 200 ncu --clock-control none -k 'regex:tuned_forces|shared_forces' --launch-count "${NCU_LAUNCHES:-4}" \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats --section InstructionStats --section Occupancy \
    --metrics sm__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
    $bench --impl "${NCU_IMPL:-gpu\.(shared|tuned)$}" --variants \
    --sizes "${NCU_SIZE:-65536}" --iterations 1 --benchmark_repetitions=1 --scope kernel >"$out/ncu.txt" 2>&1
  grep -E "tuned_forces|shared_forces|Issue Slots Busy|No Eligible|Eligible Warps|Active Warps Per|issue_stalled_(dispatch|not_selected|short|mio|wait|barrier|long)" \
    "$out/ncu.txt" | tee -a "$log"
  echo "rc=$?" | tee -a "$log"
fi
if has source; then
  # Where the stalls are, per SASS instruction (warp-state sampling), for each kernel in turn: the
  # source page exported as CSV, summed per opcode by gpu/bench/stalls_by_opcode.py.
  for impl in ${SOURCE_IMPLS:-gpu.tuned}; do
    stage "ncu source counters: $impl at N = ${NCU_SIZE:-1048576}"
    rep=$out/source-${impl//[^a-z0-9]/_}
    pattern=$(printf '%s' "$impl" | sed 's/[].[]/\\&/g')
    timeout 150 ncu --clock-control none -k regex:tuned_forces --launch-count 1 -f -o "$rep" \
      --section SourceCounters --section WarpStateStats \
      $bench --impl "^$pattern\$" --variants --sizes "${NCU_SIZE:-1048576}" --iterations 1 \
      --benchmark_repetitions=1 --scope kernel >"$rep.txt" 2>&1
    ncu --import "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.csv" 2>&1
    echo "rc=$?" | tee -a "$log"
    python3 gpu/bench/stalls_by_opcode.py <"$rep.csv" 2>&1 | tee -a "$log"
    rm -f "$rep.ncu-rep"
  done
fi
if has dram; then
  # DRAM bytes of large-N runs against input plus output: DRAM metrics alone (one pass,
  # no replay save/restore) and with the suite's full metric set.
  stage "dram"
  dram=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum
  full=$dram,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__inst_executed_pipe_xu.sum,sm__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active
  timeout 60 $bench --impl '^gpu\.(aos|tuned)$' --sizes 1048576 --profile-metrics $dram >"$out/dram.log" 2>&1
  timeout 60 $bench --impl '^gpu\.(aos|tuned)$' --sizes 1048576 --profile-metrics $full >>"$out/dram.log" 2>&1
  timeout 120 $bench --impl '^gpu\.tuned$' --sizes ${DRAM_LARGE_N:-4194304} --profile-metrics $dram >>"$out/dram.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "N=|dram__|lts__" "$out/dram.log" | tee -a "$log"
fi
if has sanitize; then
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    stage "compute-sanitizer --tool $tool"
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 \
      $bench --impl "^gpu" --sizes 1,31,4097 --scope kernel,end_to_end --iterations 1 >"$out/sanitize-$tool.txt" 2>&1
    echo "rc=$?" | tee -a "$log"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error" "$out/sanitize-$tool.txt" | sort | uniq -c |
      head -10 | tee -a "$log"
  done
  cat "$out"/sanitize-*.txt >"$out/sanitize.log" && rm "$out"/sanitize-*.txt
fi
# several_gpu_tests TAG: the multi-GPU tests on every visible GPU, then memcheck on
# MEMCHECK_GPUS of them (default all), logs TAG-test.log and TAG-memcheck.log.
several_gpu_tests() {
  stage "$1: the multi-GPU tests"
  timeout 300 $build/tests/gpu_formulations_test --gtest_filter='*Several*:*Slices*' \
    >"$out/$1-test.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  timeout 200 $build/tests/simulation_test --gtest_filter='*Several*' >>"$out/$1-test.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|\[ gpus" "$out/$1-test.log" | sort |
    uniq -c | tee -a "$log"
  stage "$1: memcheck on GPUs ${MEMCHECK_GPUS:-all} (NCCL's own probing of its kernels is not reported)"
  # (CUDA_VISIBLE_DEVICES set only where MEMCHECK_GPUS is: set empty, it would hide every GPU)
  env ${MEMCHECK_GPUS:+CUDA_VISIBLE_DEVICES=$MEMCHECK_GPUS} timeout 300 \
    compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 \
    $build/tests/gpu_formulations_test --gtest_filter='*Several*tuned*:*Several*shared' \
    >"$out/$1-memcheck.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/$1-memcheck.log" | tee -a "$log"
}
# gpu_tuned_pair TAG ARGS...: gpu.tuned's `run` at GPUS_RUN_SIZES and `simulate` at
# GPUS_SIM_SIZES, with ARGS (the GPUs, or the ranks' exchange) and the command prefix in $launch
# (mpirun for ranks); folders TAG-run and TAG-sim, logs beside them.
gpu_tuned_pair() {
  local tag=$1
  shift
  stage "gpu.tuned, $tag: run and simulate"
  # --max-eval-seconds 20: a 4M evaluation on one GPU takes about 8 s, over the default's 2.
  NBODY_EXCHANGE_TRACE=1 timeout 300 $launch $build/nbody-fair run --impl '^gpu\.tuned$' \
    --no-counters --max-eval-seconds 20 --max-attempts 2 --sizes "${GPUS_RUN_SIZES:-1M,4M}" \
    "$@" --out "$out/$tag-run" >"$out/$tag-run.log" 2>&1
  echo "run rc=$?" | tee -a "$log"
  timeout 300 $launch $build/nbody-fair simulate --impl '^gpu\.tuned$' --ic plummer \
    --sizes "${GPUS_SIM_SIZES:-16K,64K,256K}" --steps 64 "$@" --out "$out/$tag-sim" \
    >"$out/$tag-sim.log" 2>&1
  echo "simulate rc=$?" | tee -a "$log"
  # The exchange's anatomy: per N, the median of each figure over the evaluations traced.
  grep -h '^exchange:' "$out/$tag-run.log" | python3 gpu/bench/exchange_anatomy.py | tee -a "$log"
}
# scaling_study TAG FOLDER...: one `nbody-fair scaling` over the folders that exist.
scaling_study() {
  local tag=$1 folders=()
  shift
  for f in "$@"; do [[ -d $f ]] && folders+=("$f"); done
  ((${#folders[@]} >= 2)) || return 0
  stage "scaling: $tag"
  $build/nbody-fair scaling --out "$out/scaling-$tag" "${folders[@]}" >>"$log" 2>&1
  grep -E "^\| gpu" "$out/scaling-$tag/scaling.md" | head -40 | tee -a "$log"
}
# ranks_tests: nccl_ranks_test on two ranks ($ranks), then under memcheck on each rank.
ranks_tests() {
  stage "two MPI ranks, NCCL between their GPUs: nccl_ranks_test"
  NBODY_MPI_TEST_SECONDS=300 $ranks $build/tests/nccl_ranks_test >"$out/ranks-test.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|^rank [0-9]|Skipped" "$out/ranks-test.log" |
    sort | uniq -c | tee -a "$log"
  stage "nccl_ranks_test under compute-sanitizer memcheck on each rank"
  NBODY_MPI_TEST_SECONDS=300 $ranks compute-sanitizer --tool memcheck --report-api-errors no \
    --error-exitcode 99 $build/tests/nccl_ranks_test --gtest_filter='*Runs*:*Simulations*' \
    >"$out/ranks-memcheck.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/ranks-memcheck.log" | sort | uniq -c | tee -a "$log"
}
launch=""
if has gpus; then
  # STAGE_TESTS=0 where ctest ran them already (in this call, or since the last change).
  [[ ${STAGE_TESTS:-1} == 0 ]] || several_gpu_tests gpus
  all=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
  stage "the links: nvidia-smi topo -m"
  nvidia-smi topo -m >>"$log" 2>&1
  gpu_tuned_pair gpus-0 --gpus 0
  # One GPU: the pair is one run (tried so on an H100).
  [[ $all == 0 ]] || gpu_tuned_pair "gpus-${all//,/-}" --gpus "$all"
  # The all-gather's entries the run on every GPU measured: back to back and after a kernel.
  for doc in "$out/gpus-${all//,/-}-run/results.json" "$out/gpus-${all//,/-}-sim/results.json"; do
    [[ -f $doc ]] && python3 -c 'import json,sys
for e in (json.load(open(sys.argv[1])).get("ceilings") or {}).get("entries", []):
    if "all_gather" in e["name"]: print(e["name"], "=", e["value"], "|", e["method"])' "$doc" |
      tee -a "$log"
  done
fi
if has gpu-ranks; then
  # Two ranks, one GPU each (tests/mpirun.sh: oversubscribed, as root where root, under its own
  # time limit; -x hands NCCL_NVLS_ENABLE=0 and the trace switch to the ranks).
  ranks="tests/mpirun.sh 2 -x NCCL_NVLS_ENABLE -x NBODY_EXCHANGE_TRACE"
  [[ ${STAGE_TESTS:-1} == 0 ]] || ranks_tests
  export NBODY_MPI_TEST_SECONDS=300
  launch=$ranks gpu_tuned_pair ranks-nccl --gpu-exchange nccl
  launch=$ranks gpu_tuned_pair ranks-mpi --gpu-exchange mpi
  unset NBODY_MPI_TEST_SECONDS
fi
# One study of every way this host's GPUs ran gpu.tuned: one GPU, all GPUs of one process, and the
# ranks with NCCL and through host memory.
if has gpus || has gpu-ranks; then
  scaling_study run "$out"/gpus-*-run "$out"/ranks-*-run
  scaling_study sim "$out"/gpus-*-sim "$out"/ranks-*-sim
fi
if has rank-energy; then
  # Energy on ranks against one process: gpu.tuned and cpu.tbb at RANK_ENERGY_SIZES on two ranks
  # (a GPU each where the host has two, else sharing its one) and in one process on as many GPUs;
  # each run's energy records and joules per evaluation go to the log.
  pair=$(($(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l) >= 2 ? 2 : 1))
  energy_args=(run --impl '^(gpu\.tuned|cpu\.tbb)$' --sizes "${RANK_ENERGY_SIZES:-64K,1M}"
    --no-counters)
  stage "rank energy: two ranks"
  NBODY_MPI_TEST_SECONDS=300 tests/mpirun.sh 2 -x NCCL_NVLS_ENABLE $build/nbody-fair \
    "${energy_args[@]}" --out "$out/rank-energy-ranks" >"$out/rank-energy-ranks.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  stage "rank energy: one process on $pair GPU(s)"
  $build/nbody-fair "${energy_args[@]}" --gpus "$(seq -s, 0 $((pair - 1)))" \
    --out "$out/rank-energy-one" >"$out/rank-energy-one.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  for doc in "$out"/rank-energy-{ranks,one}/results.json; do
    [[ -f $doc ]] && python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(sys.argv[1].split("/")[-2], "ranks =", d["settings"].get("ranks"))
for m in d.get("energy", []):
    print(" ", m["device"], m["available"], m.get("unavailable_reason", ""), m.get("domains"),
          [round(w) for w in m.get("idle_watts", [])], m.get("update_period_s"))
for r in d["results"]:
    t = r.get("end_to_end") or r.get("kernel") or {}
    e = t.get("energy")
    print(" ", r["implementation"], r["n"], r["status"],
          e and "%.4g J (%.4g-%.4g) %.0f W %.1f updates %s" % (e["per_evaluation_j"],
          e["ci_low_j"], e["ci_high_j"], e["mean_watts"], e["periods_spanned"], e["resolved"]))' \
      "$doc" | tee -a "$log"
  done
fi
if has fair; then
  stage "nbody-fair run"
  timeout "${FAIR_TIMEOUT:-400}" $build/nbody-fair run --impl "${FAIR_IMPL:-^gpu}" \
    --sizes "${FAIR_SIZES:-16384,65536,1048576}" --out "$out/run" >>"$log" 2>&1
  echo "rc=$?" | tee -a "$log"
fi
# 1, 2, 4 and 8 GPUs of this host (as many as it has), the first g of them for g.
gpu_count=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
gpu_sets=""
for g in 1 2 4 8; do ((g <= gpu_count)) && gpu_sets="$gpu_sets $g"; done
first_gpus() { seq -s, 0 $(($1 - 1)); }
if has host-test; then
  MEMCHECK_GPUS=$(first_gpus $((gpu_count < 4 ? gpu_count : 4))) several_gpu_tests host
fi
# host_runs TAG ARGS...: gpu.tuned's `run` with ARGS on each GPU set.
host_runs() {
  local tag=$1
  shift
  for g in $gpu_sets; do
    stage "host: $tag on $g GPU(s)"
    timeout 500 $build/nbody-fair run --impl '^gpu\.tuned$' --gpus "$(first_gpus "$g")" \
      --no-counters --out "$out/host-$tag-g$g" "$@" >"$out/host-$tag-g$g.log" 2>&1
    echo "rc=$? $(grep -hE '^\| gpu\.tuned \| [0-9]+ \| ok' "$out/host-$tag-g$g/report.md" |
      cut -d'|' -f2-5 | tr '\n' ';')" | tee -a "$log"
  done
}
has host-run && host_runs run --sizes "${HOST_RUN_SIZES:-1M,4M}" --max-eval-seconds 20
has host-big && host_runs big --sizes "${HOST_BIG_SIZE:-16M}" --reps 1 --max-eval-seconds 300
if has host-weak; then
  per_gpu=${HOST_WEAK_PER_GPU:-262144}
  for g in $gpu_sets; do
    stage "host: weak, $per_gpu bodies per GPU on $g GPU(s)"
    timeout 300 $build/nbody-fair run --impl '^gpu\.tuned$' --gpus "$(first_gpus "$g")" \
      --no-counters --sizes $((per_gpu * g)) --out "$out/host-weak-g$g" \
      >"$out/host-weak-g$g.log" 2>&1
    echo "rc=$?" | tee -a "$log"
  done
fi
if has host-sim; then
  for g in $gpu_sets; do
    stage "host: simulate on $g GPU(s)"
    timeout 300 $build/nbody-fair simulate --impl '^gpu\.tuned$' --gpus "$(first_gpus "$g")" \
      --ic plummer --sizes "${HOST_SIM_SIZES:-256K,1M}" --steps "${HOST_SIM_STEPS:-16}" \
      --out "$out/host-sim-g$g" >"$out/host-sim-g$g.log" 2>&1
    echo "rc=$?" | tee -a "$log"
  done
fi
if has host-whole; then
  stage "host: all $gpu_count GPUs against all CPU cores"
  timeout 500 $build/nbody-fair run --gpus all \
    --impl '^(gpu\.tuned|cpu\.tbb|cpu\.tbb\.symmetric)(\.f64)?$' \
    --sizes "${HOST_WHOLE_SIZES:-64K,256K}" --out "$out/host-whole" >"$out/host-whole.log" 2>&1
  echo "rc=$?" | tee -a "$log"
  grep -E "^\| (f32|f64) \||^\| 8\. " "$out/host-whole/report.md" | tee -a "$log"
fi
for kind in run big weak sim; do
  [[ -d $out/host-$kind-g1 ]] || continue
  $build/nbody-fair scaling --out "$out/host-scaling-$kind" "$out"/host-$kind-g*/ >>"$log" 2>&1
  grep -E "^\| gpu" "$out/host-scaling-$kind/scaling.md" | head -20 | tee -a "$log"
done
stage "done"
(cd "$out" && tar czf logs.tar.gz --remove-files $(ls | grep -v -e '^log.txt$' -e '^run$' -e '^default$' -e '^kernel-only.json$'))
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv >>"$log" 2>&1
cat "$log"
