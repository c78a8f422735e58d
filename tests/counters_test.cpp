// Hardware counters and ceilings: the disassembly census, the derived figures, the ceilings and
// their cache, CUPTI's host-side metric checks (no GPU needed) and, where a GPU is present, CUPTI
// against work of known instruction count.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/app/ceilings.hpp"
#include "nbody/counters.hpp"
#include "nbody/cpu_peaks/cpu_counter_figures.hpp"
#include "nbody/cpu_peaks/cpu_peaks.hpp"
#include "nbody/cpu_peaks/hot_loop.hpp"
#include "nbody/cpu_peaks/loop_census.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/isas.hpp"
#include "nbody/registry.hpp"
#include "nbody/reports/ceilings_table.hpp"
#include "test_support.hpp"
#if defined(NBODY_HAVE_CUDA)
#include "nbody/gpu_peaks/gpu_peaks.hpp"
#include "nbody/profiler/cupti.hpp"
#include "nbody/profiler/gpu_counter_figures.hpp"
#endif

namespace nbody {
namespace {

using peaks::innermost_loops;
using peaks::LoopCensus;
using peaks::parse_objdump;

// GCC 13 -O3 for x86-64 of cpu.soa's loop (exact 1/sqrt, no FMA), with its cold path that jumps
// back into the loop: a backward branch that must not be taken for the inner loop.
constexpr const char* kScalarLoop = R"(
0000000000000080 <void soa_forces<float>(BodiesSoA<float> const&, float, AccelerationsSoA<float>&)>:
  c8:	movss  0x0(%rbp,%rax,4),%xmm7
  fc:	movaps %xmm4,%xmm13
 100:	movss  0x0(%rbp,%rbx,4),%xmm2
 106:	movss  (%r14,%rbx,4),%xmm1
 10c:	movss  0x0(%r13,%rbx,4),%xmm3
 113:	subss  %xmm7,%xmm2
 117:	subss  %xmm8,%xmm1
 11c:	subss  %xmm9,%xmm3
 121:	movaps %xmm2,%xmm0
 124:	movaps %xmm1,%xmm12
 128:	mulss  %xmm2,%xmm0
 12c:	mulss  %xmm1,%xmm12
 131:	addss  %xmm10,%xmm0
 136:	addss  %xmm12,%xmm0
 13b:	movaps %xmm3,%xmm12
 13f:	mulss  %xmm3,%xmm12
 144:	addss  %xmm12,%xmm0
 149:	ucomiss %xmm0,%xmm13
 14d:	ja     1dc <void soa_forces<float>(BodiesSoA<float> const&, float, AccelerationsSoA<float>&)+0x15c>
 153:	sqrtss %xmm0,%xmm0
 157:	movaps %xmm11,%xmm12
 15b:	divss  %xmm0,%xmm12
 160:	movaps %xmm12,%xmm0
 164:	mulss  %xmm12,%xmm0
 169:	mulss  %xmm12,%xmm0
 16e:	mulss  (%r15,%rbx,4),%xmm0
 174:	add    $0x1,%rbx
 178:	mulss  %xmm0,%xmm2
 17c:	mulss  %xmm0,%xmm1
 180:	mulss  %xmm3,%xmm0
 184:	addss  %xmm2,%xmm6
 188:	addss  %xmm1,%xmm5
 18c:	addss  %xmm0,%xmm4
 190:	cmp    %r12,%rbx
 193:	jb     100 <void soa_forces<float>(BodiesSoA<float> const&, float, AccelerationsSoA<float>&)+0x80>
 199:	mov    (%rsi),%rcx
 19c:	add    $0x1,%rax
 1b7:	cmp    %r12,%rax
 1ba:	jb     c8 <void soa_forces<float>(BodiesSoA<float> const&, float, AccelerationsSoA<float>&)+0x48>
 1c0:	ret
 1dc:	call   238 <void soa_forces<float>(BodiesSoA<float> const&, float, AccelerationsSoA<float>&)+0x1b8>
 273:	divss  %xmm0,%xmm12
 2d9:	jb     100 <void soa_forces<float>(BodiesSoA<float> const&, float, AccelerationsSoA<float>&)+0x80>
 2df:	jmp    199 <void soa_forces<float>(BodiesSoA<float> const&, float, AccelerationsSoA<float>&)+0x119>
)";

TEST(LoopCensus, CountsTheScalarInteractionLoop) {
  const std::vector<LoopCensus> loops = innermost_loops(parse_objdump(kScalarLoop));
  ASSERT_EQ(loops.size(), 1u) << "only [0x100, 0x193] is an innermost loop";
  const LoopCensus& loop = loops.front();
  EXPECT_EQ(loop.begin, 0x100u);
  EXPECT_EQ(loop.end, 0x193u);
  EXPECT_EQ(loop.instructions, 33);
  EXPECT_EQ(loop.add_sub, 9);  // 3 differences, 3 for the squared distance, 3 accumulations
  EXPECT_EQ(loop.mul, 9);
  EXPECT_EQ(loop.fma, 0);
  EXPECT_EQ(loop.sqrt, 1);
  EXPECT_EQ(loop.div, 1);
  EXPECT_EQ(loop.memory, 8);
  EXPECT_EQ(loop.other_fp, 1);
  EXPECT_EQ(loop.other, 4);
  EXPECT_EQ(loop.interactions_per_iteration, 1);
  EXPECT_DOUBLE_EQ(loop.flops_per_iteration, 18.0);
  EXPECT_EQ(loop.isa, "sse");
  EXPECT_EQ(loop.precision, "f32");
}

// An AVX-512 rsqrt + Newton-Raphson loop (abridged), 16 interactions per iteration.
constexpr const char* kAvx512Loop = R"(
0000000000000000 <kernel>:
  40:	vmovups (%rax,%rcx,4),%zmm1
  47:	vsubps %zmm10,%zmm1,%zmm1
  4d:	vfmadd213ps %zmm13,%zmm1,%zmm4
  53:	vrsqrt14ps %zmm4,%zmm5
  59:	vmulps %zmm5,%zmm4,%zmm4
  5f:	vfnmadd213ps {rn-sae},%zmm14,%zmm5,%zmm4
  65:	vfmadd231ps (%rdx,%rcx,4){1to16},%zmm4,%zmm0
  6c:	add    $0x10,%rcx
  70:	cmp    %rcx,%rsi
  73:	jne    40 <kernel+0x40>
  79:	ret
)";

TEST(LoopCensus, CountsLanesOfAnAvx512Loop) {
  const std::vector<LoopCensus> loops = innermost_loops(parse_objdump(kAvx512Loop));
  ASSERT_EQ(loops.size(), 1u);
  const LoopCensus& loop = loops.front();
  EXPECT_EQ(loop.isa, "avx512f");
  EXPECT_EQ(loop.vector_bits, 512);
  EXPECT_EQ(loop.interactions_per_iteration, 16);
  EXPECT_EQ(loop.rsqrt, 1);
  EXPECT_EQ(loop.fma, 3);
  EXPECT_EQ(loop.instructions, 10);
  EXPECT_DOUBLE_EQ(loop.flops_per_iteration, 16.0 * (1 + 1 + 3 * 2));
  EXPECT_DOUBLE_EQ(loop.fp_instructions_per_iteration, 6.0);
}

// Work for the sampler: a reciprocal square root per element, kept out of line.
[[gnu::noinline]] float sum_of_inverse_roots(const std::vector<float>& values) {
  float sum = 0;
  for (const float v : values) sum += 1.0f / std::sqrt(v);
  return sum;
}

// Unoptimised builds keep xsimd and std:: calls out of line: the hot function then has no loop. A
// sanitized build's loops carry the sanitizers' checks (and at -O1 lose their shape), so their
// counts are not the kernels'.
#if defined(__OPTIMIZE__) && !defined(NBODY_SANITIZED_BUILD)
constexpr bool kOptimisedBuild = true;
#else
constexpr bool kOptimisedBuild = false;
#endif

// `count` values in [0.5, 2) from the test seed: work for the sampler.
std::vector<float> positive_values(std::size_t count) {
  std::vector<float> values(count);
  std::mt19937 random(testing::test_seed() & 0xFFFFFFFF);
  std::uniform_real_distribution<float> positive(0.5f, 2.0f);
  for (float& v : values) v = positive(random);
  return values;
}

bool binutils_missing(const peaks::HotLoop& hot) {
  return hot.unavailable_reason.find("objdump") != std::string::npos ||
         hot.unavailable_reason.find("nm ") != std::string::npos;
}

// An aarch64 NEON loop (abridged from cpu.simd's float32 kernel: FRSQRTE, FRSQRTS and a Newton
// step), 4 interactions per iteration; A64's comments ("//") and immediates ('#'), and a loop
// closed by CBNZ, whose target follows a register.
constexpr const char* kNeonLoops = R"(
libnbody_cpu.a(simd_arch_neon64.cpp.o):     file format elf64-littleaarch64

0000000000000000 <kernel>:
  40:	ldr	q1, [x1, x3]
  44:	fsub	v1.4s, v1.4s, v10.4s
  48:	fmla	v4.4s, v1.4s, v1.4s
  4c:	frsqrte	v5.4s, v4.4s
  50:	fmul	v6.4s, v4.4s, v5.4s
  54:	frsqrts	v6.4s, v6.4s, v5.4s
  58:	fmul	v5.4s, v5.4s, v6.4s
  5c:	fmla	v0.4s, v4.4s, v2.s[0]
  60:	add	x3, x3, #0x10
  64:	cmp	x3, x2
  68:	b.ne	40 <kernel+0x40>  // b.any
  6c:	ret

0000000000000080 <tail>:
  80:	ldr	d1, [x1], #8
  84:	fsqrt	d2, d1
  88:	fdiv	d3, d4, d2
  8c:	sub	x4, x4, #0x1
  90:	cbnz	x4, 80 <tail>
  94:	ret
)";

TEST(LoopCensus, ReadsAarch64Loops) {
  const std::vector<LoopCensus> loops = innermost_loops(parse_objdump(kNeonLoops));
  ASSERT_EQ(loops.size(), 2u);
  const LoopCensus& neon = loops[0];
  EXPECT_EQ(neon.function, "kernel");
  EXPECT_EQ(neon.isa, "neon64");
  EXPECT_EQ(neon.vector_bits, 128);
  EXPECT_EQ(neon.precision, "f32");
  EXPECT_EQ(neon.instructions, 11);
  EXPECT_EQ(neon.interactions_per_iteration, 4);
  EXPECT_EQ(neon.rsqrt, 1);
  EXPECT_EQ(neon.fma, 3);  // two FMLA and the FRSQRTS step
  EXPECT_EQ(neon.mul, 2);
  EXPECT_EQ(neon.add_sub, 1);
  EXPECT_EQ(neon.memory, 1);
  EXPECT_EQ(neon.other, 3);
  EXPECT_DOUBLE_EQ(neon.fp_instructions_per_iteration, 7.0);
  EXPECT_DOUBLE_EQ(neon.flops_per_iteration, 4.0 * (1 + 2 + 1 + 2 + 1 + 2));
  const LoopCensus& scalar = loops[1];
  EXPECT_EQ(scalar.function, "tail");
  EXPECT_EQ(scalar.instructions, 5);
  EXPECT_EQ(scalar.sqrt, 1);
  EXPECT_EQ(scalar.div, 1);
  EXPECT_EQ(scalar.interactions_per_iteration, 1);
  EXPECT_EQ(scalar.precision, "f64");
}

TEST(HotLoop, FindsTheLoopThatRuns) {
  if (!kOptimisedBuild) GTEST_SKIP() << "hot-loop counts are meaningful in optimised builds only";
  const std::vector<float> values = positive_values(1 << 16);
  volatile float sink = 0;
  const peaks::HotLoop hot = peaks::find_hot_loop(
      [&] {
        double seconds = 0;
        for (int repeat = 0; repeat < 20; ++repeat) sink = sink + sum_of_inverse_roots(values);
        return seconds;
      },
      0.3);
  if (binutils_missing(hot)) GTEST_SKIP() << "binutils missing: " << hot.unavailable_reason;
  ASSERT_TRUE(hot.unavailable_reason.empty()) << hot.unavailable_reason;
  EXPECT_NE(hot.loop.function.find("sum_of_inverse_roots"), std::string::npos) << hot.loop.function;
  EXPECT_GE(hot.loop.interactions_per_iteration, 1);
  EXPECT_GE(hot.loop.sqrt + hot.loop.rsqrt, 1);
  EXPECT_GT(static_cast<double>(hot.samples_in_loop), 0.5 * static_cast<double>(hot.samples));
}

// Work without a square root, kept out of line: a sum over several copies of the values, as
// cpu.tbb.symmetric's sum over its threads' accumulators.
[[gnu::noinline]] float sum_of_copies(const std::vector<float>& values, int copies) {
  float sum = 0;
  for (int copy = 0; copy < copies; ++copy) {
    for (const float v : values) sum = sum * 0.5f + v;
  }
  return sum;
}

// Where a loop without a square root takes more samples than the interaction loop, the
// interaction loop is still the one counted: the hottest function that has one.
TEST(HotLoop, CountsTheInteractionLoopWhereAnotherLoopIsHotter) {
  if (!kOptimisedBuild) GTEST_SKIP() << "hot-loop counts are meaningful in optimised builds only";
  const std::vector<float> values = positive_values(1 << 14);
  volatile float sink = 0;
  const auto roots = [&] {
    for (int repeat = 0; repeat < 4; ++repeat) sink = sink + sum_of_inverse_roots(values);
  };
  // As many passes of sum_of_copies as take four times the roots' time, timed here: the two
  // loops' speeds differ by machine, and more under an emulator (a fixed 12 or 24 passes left the
  // interaction loop over half the samples on some 2-core machines; 48 left it none under qemu).
  // Both are run once first: under an emulator a first run also translates the code.
  const auto seconds_of = [](const auto& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Counts read from a volatile, so that every call runs the one copy of sum_of_copies (no
  // clone for a constant count), the one sampled below.
  volatile int timed_copies = 8;
  roots();
  sink = sink + sum_of_copies(values, timed_copies);
  const double roots_s = seconds_of(roots);
  const double one_copy_s =
      seconds_of([&] { sink = sink + sum_of_copies(values, timed_copies); }) / timed_copies;
  volatile int copies = std::max(1, static_cast<int>(std::lround(4 * roots_s / one_copy_s)));
  const peaks::HotLoop hot = peaks::find_hot_loop(
      [&] {
        roots();
        sink = sink + sum_of_copies(values, copies);
        return 0.0;
      },
      0.3);
  if (binutils_missing(hot)) GTEST_SKIP() << "binutils missing: " << hot.unavailable_reason;
  ASSERT_TRUE(hot.unavailable_reason.empty()) << hot.unavailable_reason;
  EXPECT_NE(hot.loop.function.find("sum_of_inverse_roots"), std::string::npos) << hot.loop.function;
  EXPECT_GE(hot.loop.sqrt + hot.loop.rsqrt, 1);
  // The other loop really was the hotter one: this test's point.
  EXPECT_LT(static_cast<double>(hot.samples_in_function), 0.5 * static_cast<double>(hot.samples));
}

ImplementationInfo info_of(Precision precision, PairScheme pairs) {
  ImplementationInfo info;
  info.precision = precision;
  info.pairs = pairs;
  return info;
}

#if defined(NBODY_HAVE_CUDA) || defined(__x86_64__)  // the tests that read them
nlohmann::json synthetic_ceilings() {
  return {{"schema", kCeilingsSchemaName},
          {"entries",
           {{{"name", kGpuFp32FlopsCeiling},
             {"value", 50e12},
             {"datasheet", {{"value", 67e12}, {"source", "test"}}}},
            {{"name", kGpuRsqrtCeiling}, {"value", 4e12}},
            {{"name", kGpuInteractionMixCeiling}, {"value", 2e12}},
            {{"name", kGpuMemoryBandwidthCeiling},
             {"value", 3e12},
             {"datasheet", {{"value", 3.35e12}, {"source", "test"}}}},
            {{"name", cpu_fp32_flops_ceiling("avx2", false)},
             {"value", 1e11},
             {"threads", 1},
             {"fp_instructions_per_second", 6.25e9}},
            {{"name", cpu_fp32_flops_ceiling("avx2", true)},
             {"value", 1.6e12},
             {"threads", 16},
             {"fp_instructions_per_second", 1e11}},
            {{"name", cpu_fp32_flops_ceiling("avx512f", true)},
             {"value", 3.2e12},
             {"threads", 16},
             {"fp_instructions_per_second", 1e11}},
            {{"name", cpu_fp64_flops_ceiling("avx512f", true)},
             {"value", 1.6e12},
             {"threads", 16},
             {"fp_instructions_per_second", 0.9e11}}}}};
}
#endif

#if defined(NBODY_HAVE_CUDA)  // the GPU figures are gpu/'s
TEST(CounterFigures, GpuFiguresFollowFromTheCounters) {
  const std::size_t n = 1000;
  const double interactions = 1e6;
  // Per interaction: 3 FADD, 3 FMUL, 6 FFMA (18 flops), 4 XU thread instructions (1/8 of a warp
  // instruction) and 24 thread instructions in all.
  const std::map<std::string, double> metrics = {
      {"gpu__time_duration.sum", 1e6},  // 1 ms
      {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 6 * interactions},
      {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 3 * interactions},
      {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 3 * interactions},
      {"smsp__inst_executed_pipe_xu.sum", interactions / 8},
      {"dram__bytes_read.sum", 16e3},
      {"dram__bytes_write.sum", 12e3},
      {"lts__t_bytes.sum", 1e9},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", 50},
      {"smsp__cycles_elapsed.avg.per_second", 1.5e9},
      {"sm__inst_executed.sum", 24 * interactions / 32},
      {"sm_count", 100},
  };
  const auto d =
      profiler::derive_gpu_figures(metrics, info_of(Precision::f32, PairScheme::all_pairs), n,
                                   synthetic_ceilings().get<Ceilings>());
  EXPECT_DOUBLE_EQ(d.counted_flops_per_interaction.value(), 3 + 3 + 2 * 6);
  EXPECT_DOUBLE_EQ(d.interactions_per_second.value(), 1e9);
  EXPECT_DOUBLE_EQ(d.gflops_counted.value(), 18.0);
  EXPECT_DOUBLE_EQ(d.gflops_at_20.value(), 20.0);
  EXPECT_DOUBLE_EQ(d.fraction_of_measured_peak.value(), 18e9 / 50e12);
  EXPECT_DOUBLE_EQ(d.fraction_of_datasheet_peak.value(), 18e9 / 67e12);
  EXPECT_DOUBLE_EQ(d.fp32_pipe_fraction_of_measured.value(), 12e9 / 25e12);
  EXPECT_DOUBLE_EQ(d.xu_instructions_per_pair.value(), 4.0);
  EXPECT_DOUBLE_EQ(d.dram_bytes_per_second.value(), 28e6);
  EXPECT_DOUBLE_EQ(d.dram_fraction_of_measured_bandwidth.value(), 28e6 / 3e12);
  EXPECT_DOUBLE_EQ(d.arithmetic_intensity_flops_per_dram_byte.value(), 18e6 / 28e3);
  EXPECT_DOUBLE_EQ(d.l2_bytes_per_second.value(), 1e12);
  EXPECT_DOUBLE_EQ(d.achieved_occupancy.value(), 0.5);
  EXPECT_DOUBLE_EQ(d.instructions_per_interaction.value(), 24.0);
  EXPECT_DOUBLE_EQ(d.issue_bound_interactions_per_second.value(), 25e12 / 24);
  EXPECT_DOUBLE_EQ(d.issue_bound_at_kernel_clock_interactions_per_second.value(),
                   100 * 4 * 32 * 1.5e9 / 24);
  EXPECT_DOUBLE_EQ(d.mufu_bound_interactions_per_second.value(), 4e12 / 4);
  EXPECT_DOUBLE_EQ(d.instruction_bound_interactions_per_second.value(), 4e12 / 4);
  EXPECT_DOUBLE_EQ(d.fraction_of_instruction_bound.value(), 1e9 / 1e12);
  EXPECT_DOUBLE_EQ(d.fraction_of_interaction_mix_ceiling.value(), 1e9 / 2e12);
}

TEST(CounterFigures, Float64KernelsAreBoundByTheirOwnPipe) {
  const std::size_t n = 1000;
  const double interactions = 1e6;
  nlohmann::json ceilings = synthetic_ceilings();
  ceilings["entries"].push_back({{"name", kGpuFp64FlopsCeiling}, {"value", 25e12}});
  const std::map<std::string, double> metrics = {
      {"gpu__time_duration.sum", 1e6},
      {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 9 * interactions},
      {"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 3 * interactions},
      {"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 5 * interactions},
      {"sm__inst_executed.sum", 20 * interactions / 32}};
  const auto d = profiler::derive_gpu_figures(
      metrics, info_of(Precision::f64, PairScheme::all_pairs), n, ceilings.get<Ceilings>());
  EXPECT_DOUBLE_EQ(d.counted_flops_per_interaction.value(), 3 + 5 + 2 * 9);
  EXPECT_DOUBLE_EQ(d.fraction_of_measured_peak.value(), 26e9 / 25e12);
  EXPECT_DOUBLE_EQ(d.fp64_instructions_per_pair.value(), 17.0);
  EXPECT_DOUBLE_EQ(d.fp64_pipe_bound_interactions_per_second.value(), 12.5e12 / 17);
  EXPECT_DOUBLE_EQ(d.instruction_bound_interactions_per_second.value(), 12.5e12 / 17);
  EXPECT_FALSE(d.fraction_of_interaction_mix_ceiling.has_value());  // the mix is float32's
}

#endif  // NBODY_HAVE_CUDA

// A CPU loop is held against the ceiling of the narrowest ISA of this build's list that holds its
// vectors (a scalar loop: the first), and against the widest the machine measured: on any
// processor's list.
TEST(CounterFigures, ALoopIsHeldAgainstItsOwnIsasCeilingFromThisBuildsList) {
  const IsaInfo& first = compiled_isas().front();
  const IsaInfo& widest = compiled_isas().back();
  Ceilings ceilings;
  const auto add = [&ceilings](const IsaInfo& isa, double flops, double instructions) {
    ceilings.entries.push_back(CeilingEntry{.name = cpu_fp32_flops_ceiling(isa.name, true),
                                            .device = DeviceKind::cpu,
                                            .value = flops,
                                            .unit = "FLOP/s",
                                            .threads = 16,
                                            .fp_instructions_per_second = instructions});
  };
  add(first, 1e12, 0.5e11);
  if (widest.isa != first.isa) add(widest, 2e12, 1e11);
  const double widest_flops = widest.isa != first.isa ? 2e12 : 1e12;
  const double widest_instructions = widest.isa != first.isa ? 1e11 : 0.5e11;
  const std::size_t n = 1000;
  std::map<std::string, double> loop = {
      {"loop.interactions", 16},
      {"loop.instructions", 50},
      {"loop.fp_instructions", 40},
      {"loop.flops", 16 * 25.0},
      {"loop.vector_bits", static_cast<double>(widest.vector_bits)},
      {"kernel_seconds", 1e-3},
      {"threads", 16}};
  const ImplementationInfo all_pairs = info_of(Precision::f32, PairScheme::all_pairs);
  const double flop_rate = 25.0 * 1e6 / 1e-3;
  const auto vector = peaks::derive_cpu_figures(loop, all_pairs, n, ceilings);
  EXPECT_DOUBLE_EQ(vector.fraction_of_measured_peak.value(), flop_rate / widest_flops);
  EXPECT_DOUBLE_EQ(vector.fraction_of_machine_peak.value(), flop_rate / widest_flops);
  EXPECT_DOUBLE_EQ(vector.instruction_bound_interactions_per_second.value(),
                   widest_instructions / 2.5);
  loop["loop.vector_bits"] = 0;  // a scalar loop
  const auto scalar = peaks::derive_cpu_figures(loop, all_pairs, n, ceilings);
  EXPECT_DOUBLE_EQ(scalar.fraction_of_measured_peak.value(), flop_rate / 1e12);
  EXPECT_DOUBLE_EQ(scalar.fraction_of_machine_peak.value(), flop_rate / widest_flops);
}

#if defined(__x86_64__)  // x86-64's list: a 256-bit loop is AVX2's, the machine's widest AVX-512F
TEST(CounterFigures, SymmetricKernelsAreCreditedNSquared) {
  const std::size_t n = 1001;
  const ImplementationInfo symmetric = info_of(Precision::f32, PairScheme::symmetric);
  EXPECT_EQ(pairs_evaluated(symmetric.pairs, n), 1001u * 1000 / 2);
  const std::map<std::string, double> loop = {
      {"loop.interactions", 8},     {"loop.instructions", 40},
      {"loop.fp_instructions", 24}, {"loop.flops", 8 * 26.0},
      {"loop.vector_bits", 256},    {"loop.rsqrt", 1},
      {"kernel_seconds", 1e-3},     {"threads", 8}};
  const auto d =
      peaks::derive_cpu_figures(loop, symmetric, n, synthetic_ceilings().get<Ceilings>());
  const double half = (1001.0 * 1000 / 2) / (1001.0 * 1001);
  EXPECT_DOUBLE_EQ(d.counted_flops_per_pair.value(), 26.0);
  EXPECT_DOUBLE_EQ(d.counted_flops_per_interaction.value(), 26.0 * half);
  EXPECT_DOUBLE_EQ(d.instructions_per_pair.value(), 5.0);
  EXPECT_DOUBLE_EQ(d.fp_instructions_per_pair.value(), 3.0);
  EXPECT_DOUBLE_EQ(d.interactions_per_second.value(), 1001.0 * 1001 / 1e-3);
  // 8 of the 16 threads of the all-cores AVX2 ceiling: half of it.
  const double flop_rate = 26.0 * (1001.0 * 1000 / 2) / 1e-3;
  EXPECT_DOUBLE_EQ(d.fraction_of_measured_peak.value(), flop_rate / 0.8e12);
  EXPECT_DOUBLE_EQ(d.fraction_of_machine_peak.value(), flop_rate / 1.6e12);
  EXPECT_DOUBLE_EQ(d.instruction_bound_interactions_per_second.value(), 0.5e11 / 3.0 / half);
}

// A float64 kernel is held against the float64 FMA ceiling of its ISA, never the float32 one: half
// the flops per instruction.
TEST(CounterFigures, Float64CpuKernelsAreHeldAgainstTheFloat64Ceiling) {
  const std::size_t n = 1000;
  const std::map<std::string, double> loop = {
      {"loop.interactions", 16},    {"loop.instructions", 50},
      {"loop.fp_instructions", 40}, {"loop.flops", 16 * 25.0},
      {"loop.vector_bits", 512},    {"loop.rsqrt", 2},
      {"kernel_seconds", 1e-3},     {"threads", 16}};
  const Ceilings ceilings = synthetic_ceilings().get<Ceilings>();
  const auto f64 =
      peaks::derive_cpu_figures(loop, info_of(Precision::f64, PairScheme::all_pairs), n, ceilings);
  const double flop_rate = 25.0 * 1e6 / 1e-3;
  EXPECT_DOUBLE_EQ(f64.fraction_of_measured_peak.value(), flop_rate / 1.6e12);
  EXPECT_DOUBLE_EQ(f64.fraction_of_machine_peak.value(), flop_rate / 1.6e12);
  EXPECT_DOUBLE_EQ(f64.instruction_bound_interactions_per_second.value(), 0.9e11 / 2.5);
  const auto f32 =
      peaks::derive_cpu_figures(loop, info_of(Precision::f32, PairScheme::all_pairs), n, ceilings);
  EXPECT_DOUBLE_EQ(f32.fraction_of_measured_peak.value(), flop_rate / 3.2e12);
  // No float64 ceiling of that ISA (a file measured before there were any): no fraction at all.
  Ceilings float32_only = ceilings;
  std::erase_if(float32_only.entries,
                [](const CeilingEntry& e) { return e.name.starts_with("cpu.fp64"); });
  const auto without = peaks::derive_cpu_figures(
      loop, info_of(Precision::f64, PairScheme::all_pairs), n, float32_only);
  EXPECT_FALSE(without.fraction_of_measured_peak.has_value());
  EXPECT_FALSE(without.instruction_bound_interactions_per_second.has_value());
}
#endif  // __x86_64__

std::filesystem::path fresh_temporary_directory(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / (name + "-" + std::to_string(testing::test_seed()));
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(Ceilings, MeasuredCachedAndRendered) {
  CeilingOptions options;
  options.cache_directory = fresh_temporary_directory("nbody-ceilings");
  options.seconds_per_fma_run = 0.02;
  options.triad_bytes_per_array = std::size_t{32} << 20;
  const std::optional<Ceilings> measured = measure_ceilings(options);
  ASSERT_TRUE(measured.has_value());
  EXPECT_FALSE(measured->from_cache);
  // The narrowest ISA of this build's list (x86-64: sse4.2; aarch64: neon64).
  const std::string narrowest(compiled_isas().front().name);
  const auto sse_one = measured->value(cpu_fp32_flops_ceiling(narrowest, false));
  ASSERT_TRUE(sse_one.has_value());
  // Positive and finite only: figures are for reports, not tests (a Debug + ASan build measures
  // tens of MFLOP/s here).
  EXPECT_GT(*sse_one, 0);
  EXPECT_TRUE(std::isfinite(*sse_one));
  const auto sse_all = measured->value(cpu_fp32_flops_ceiling(narrowest, true));
  ASSERT_TRUE(sse_all.has_value());
  EXPECT_GT(*sse_all, 0.2 * *sse_one);  // loose: tests may share the machine with other tests
  // The float64 chains beside the float32 ones: the same instructions on half the lanes.
  const auto sse_one_f64 = measured->value(cpu_fp64_flops_ceiling(narrowest, false));
  ASSERT_TRUE(sse_one_f64.has_value());
  EXPECT_GT(*sse_one_f64, 0);
  const auto triad = measured->value(kCpuMemoryBandwidthCeiling);
  ASSERT_TRUE(triad.has_value());
  EXPECT_GT(*triad, 0);
  for (const CeilingEntry& e : measured->entries) {
    EXPECT_FALSE(e.method.empty() || e.unit.empty()) << nlohmann::json(e).dump();
  }
  // The cache's JSON reads back as the same entries.
  EXPECT_EQ(nlohmann::json(nlohmann::json(*measured).get<Ceilings>()), nlohmann::json(*measured));

  // Ceilings measured while other programs were busy (ctest -j) carry warnings and are not cached.
  const std::optional<Ceilings> cached = measure_ceilings(options);
  ASSERT_TRUE(cached.has_value());
  if (measured->warnings.empty()) {
    EXPECT_TRUE(cached->from_cache);
    EXPECT_EQ(nlohmann::json(cached->entries), nlohmann::json(measured->entries));
  } else {
    std::printf("measured on a busy machine: %s\n",
                nlohmann::json(measured->warnings).dump().c_str());
    EXPECT_FALSE(cached->from_cache);
  }
  options.remeasure = true;
  options.measure_gpu = false;
  EXPECT_FALSE(measure_ceilings(options)->from_cache);

  const std::string table = reports::render_ceilings_table(measured);
  EXPECT_NE(table.find("| cpu.fp32_flops." + narrowest + ".one_core |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("FLOP/s"), std::string::npos);
  EXPECT_EQ(reports::render_ceilings_table(std::nullopt), "No ceilings were measured.\n");
  Ceilings doubtful = *measured;
  doubtful.warnings = {"gpu.fp32_flops.fma measured at 50% of its theoretical figure"};
  EXPECT_NE(reports::render_ceilings_table(doubtful).find("may read low"), std::string::npos);
  EXPECT_EQ(reports::format_si(3.35e12, "B/s"), "3.35 TB/s");
  EXPECT_EQ(reports::format_si(1.25e-5, "s"), "12.5 µs");
  EXPECT_EQ(reports::format_si(0.0, "s"), "0 s");
  EXPECT_EQ(reports::format_si(2.5, "s"), "2.5 s");
  std::filesystem::remove_all(options.cache_directory);
}

TEST(CpuCounters, EveryCpuFormulationGetsItsHotLoopCounted) {
  if (!kOptimisedBuild) GTEST_SKIP() << "hot-loop counts are meaningful in optimised builds only";
  const Registry registry = make_default_registry();
  auto sources = make_counter_sources();
  const Ceilings ceilings;
  const std::size_t n = 1500;  // not a multiple of any vector width
  const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, 7);
  // Counters are read in runs, which leave the tuning variants out (at this N, a small-tile
  // variant of cpu.tbb.symmetric spends its time in the reduction, not in the pair loop), and the
  // trees, whose figures would be per credited interaction.
  for (const Implementation& impl : registry.all()) {
    if (impl.info.device != DeviceKind::cpu || impl.info.role == Role::tuning_variant ||
        impl.info.algorithm != Algorithm::all_pairs || impl.unavailable_reason()) {
      continue;
    }
    CounterSource* source = nullptr;
    for (auto& s : sources) {
      if (s->applies_to(impl.info)) source = s.get();
    }
    ASSERT_NE(source, nullptr) << impl.info.name;
    auto run = impl.prepare(snapshot.bodies, testing::kTestSoftening, {});
    const CounterReadout readout = source->read(*run, impl.info, n, ceilings);
    if (readout.unavailable_reason.find("objdump") != std::string::npos) {
      GTEST_SKIP() << readout.unavailable_reason;
    }
    ASSERT_TRUE(readout.unavailable_reason.empty())
        << impl.info.name << ": " << readout.unavailable_reason;
    const double flops = readout.derived.counted_flops_per_pair.value();
    const double instructions = readout.derived.instructions_per_pair.value();
    std::printf("%-20s %-90.90s flops/pair %5.2f  instructions/pair %5.2f  fp instr/pair %5.2f\n",
                impl.info.name.c_str(), readout.source.c_str(), flops, instructions,
                readout.derived.fp_instructions_per_pair.value());
    // 20 by convention; full-accuracy all-pairs kernels count 18 to 32 (float64: a second
    // Newton-Raphson step), the bare rsqrt fewer. A symmetric kernel's pair also accumulates the
    // reaction on the other body (6 more) and adds it to memory: 33.75 in float32, 40.75 in
    // float64.
    EXPECT_GT(flops, 8) << impl.info.name;
    EXPECT_LT(flops, 44) << impl.info.name;
    EXPECT_GE(instructions, readout.derived.fp_instructions_per_pair.value());
  }
}

#if defined(NBODY_HAVE_CUDA)

TEST(Cupti, MetricNamesAreValidForHopperWithoutAGpu) {
  if (const auto refusal = profiler::cupti_refusal_in_build()) GTEST_SKIP() << *refusal;
  std::vector<std::string> names = profiler::kernel_metrics();
  names.push_back("no_such__metric.sum");
  const profiler::MetricValidation validation = profiler::validate_metrics("GH100", names);
  ASSERT_TRUE(validation.error.empty()) << validation.error;
  ASSERT_EQ(validation.metrics.size(), names.size());
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    EXPECT_TRUE(validation.metrics[i].valid) << names[i];
  }
  EXPECT_FALSE(validation.metrics.back().valid);
  EXPECT_GT(validation.passes, 0u);
}

TEST(Cupti, RangesCombineAsCountersAndTimeWeightedRatios) {
  const std::vector<profiler::RangeValues> ranges = {
      {"0", {{"gpu__time_duration.sum", 1}, {"sm__inst_executed.sum", 10}, {"x.pct", 20}}},
      {"1", {{"gpu__time_duration.sum", 3}, {"sm__inst_executed.sum", 5}, {"x.pct", 60}}}};
  const auto combined = profiler::combine_ranges(ranges);
  EXPECT_DOUBLE_EQ(combined.at("gpu__time_duration.sum"), 4);
  EXPECT_DOUBLE_EQ(combined.at("sm__inst_executed.sum"), 15);
  EXPECT_DOUBLE_EQ(combined.at("x.pct"), (20 * 1 + 60 * 3) / 4.0);
}

// A PreparedRun that launches nothing: the profiler must say so, not throw.
class IdleGpuRun final : public PreparedRun {
 public:
  Seconds evaluate(Scope) override { return {}; }
  std::vector<Vec3<double>> accelerations() override { return {}; }
};

bool gpu_present() {
  const Registry registry = make_default_registry();
  const Implementation* aos = registry.find("gpu.aos");
  return aos != nullptr && !aos->unavailable_reason();
}

// Why CUPTI cannot count kernels here: no GPU, or a build that cannot load CUPTI.
std::optional<std::string> why_no_counting() {
  if (!gpu_present()) return "no CUDA device";
  return profiler::cupti_refusal_in_build();
}

TEST(Cupti, DegradesToAReasonWithoutAGpuOrWithoutKernels) {
  ImplementationInfo info;
  info.device = DeviceKind::gpu;
  IdleGpuRun run;
  auto sources = make_counter_sources();
  ASSERT_TRUE(sources.front()->applies_to(info));
  const CounterReadout readout = sources.front()->read(run, info, 100, Ceilings{});
  EXPECT_FALSE(readout.unavailable_reason.empty());
  std::printf("reason: %s\n", readout.unavailable_reason.c_str());
  if (!why_no_counting()) {
    EXPECT_NE(readout.unavailable_reason.find("no kernel"), std::string::npos)
        << readout.unavailable_reason;
  }
}

// A run on several GPUs (--gpus 0,1) is not profiled, whatever the machine: kernel replay would
// run NCCL's all-gather again on one GPU alone, which would wait for ever.
class TwoGpuRun final : public PreparedRun {
 public:
  Seconds evaluate(Scope) override {
    ADD_FAILURE() << "a run on several GPUs was profiled";
    return {};
  }
  std::vector<Vec3<double>> accelerations() override { return {}; }
  std::map<std::string, std::string> details() const override {
    return {{"gpu_count", "2"}, {"device_ordinal", "0"}};
  }
};

TEST(Cupti, RefusesARunOnSeveralGpusWithTheReason) {
  ImplementationInfo info;
  info.device = DeviceKind::gpu;
  TwoGpuRun run;
  auto sources = make_counter_sources();
  ASSERT_TRUE(sources.front()->applies_to(info));
  const CounterReadout readout = sources.front()->read(run, info, 100, Ceilings{});
  EXPECT_NE(readout.unavailable_reason.find("several GPUs"), std::string::npos)
      << readout.unavailable_reason;
}

TEST(Cupti, CountsExactlyTheFmasOfKnownWork) {
  if (const auto reason = why_no_counting()) GTEST_SKIP() << *reason;
  const int blocks = 132, threads = 128, iterations = 1000;
  peaks::KnownWork work;
  const profiler::KernelProfile profile = profiler::profile_kernels(
      0, [&] { work = peaks::run_known_fma_work(0, blocks, threads, iterations); },
      profiler::kernel_metrics());
  ASSERT_TRUE(profile.unavailable_reason.empty()) << profile.unavailable_reason;
  ASSERT_TRUE(work.error.empty()) << work.error;
  ASSERT_EQ(profile.ranges.size(), 1u);
  const auto& values = profile.ranges.front().values;
  std::printf("chip %s, %zu passes\n", profile.chip.c_str(), profile.passes);
  for (const auto& [name, value] : values) std::printf("  %-55s %.6g\n", name.c_str(), value);
  EXPECT_EQ(values.at("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
            work.ffma_thread_instructions);
  EXPECT_GT(values.at("gpu__time_duration.sum"), 0);
  EXPECT_TRUE(profile.metrics_not_supported.empty());
}

// The DRAM counters against traffic of known size: a copy far larger than the L2 reads and writes
// its size (within the L2's worth of lines that may be resident or dirty when it starts).
TEST(Cupti, CountsTheDramBytesOfAStreamingCopy) {
  if (const auto reason = why_no_counting()) GTEST_SKIP() << *reason;
  const std::vector<std::string> metrics = {"dram__bytes_read.sum", "dram__bytes_write.sum"};
  profiler::KernelProfile profile;
  const peaks::KnownTraffic traffic =
      peaks::run_known_copy_work(0, std::size_t{1} << 30, [&](const std::function<void()>& copy) {
        profile = profiler::profile_kernels(0, copy, metrics);
      });
  ASSERT_TRUE(traffic.error.empty()) << traffic.error;
  ASSERT_TRUE(profile.unavailable_reason.empty()) << profile.unavailable_reason;
  ASSERT_EQ(profile.ranges.size(), 1u);
  const auto& values = profile.ranges.front().values;
  std::printf("copy of %.4g B (L2 %.4g B), %zu pass(es): DRAM read %.4g B, written %.4g B\n",
              traffic.bytes, traffic.l2_bytes, profile.passes, values.at(metrics[0]),
              values.at(metrics[1]));
  if (traffic.bytes < 8 * traffic.l2_bytes) GTEST_SKIP() << "the copy is not far above the L2 size";
  EXPECT_NEAR(values.at(metrics[0]), traffic.bytes, traffic.l2_bytes);
  EXPECT_NEAR(values.at(metrics[1]), traffic.bytes, traffic.l2_bytes);
}

// What DRAM traffic a kernel that touches no memory shows while it runs (about half a second of
// FFMA chains): the floor under every DRAM figure of a long kernel (docs/perf-notes.md, counters).
TEST(Cupti, DramTrafficOfAComputeOnlyKernelIsSmall) {
  if (const auto reason = why_no_counting()) GTEST_SKIP() << *reason;
  const std::vector<std::string> metrics = {"dram__bytes_read.sum", "dram__bytes_write.sum",
                                            "gpu__time_duration.sum"};
  peaks::KnownWork work;
  const profiler::KernelProfile profile = profiler::profile_kernels(
      0, [&] { work = peaks::run_known_fma_work(0, 132 * 8, 256, 7'500'000); }, metrics);
  ASSERT_TRUE(work.error.empty()) << work.error;
  ASSERT_TRUE(profile.unavailable_reason.empty()) << profile.unavailable_reason;
  ASSERT_EQ(profile.ranges.size(), 1u);
  const auto& values = profile.ranges.front().values;
  const double seconds = values.at(metrics[2]) * 1e-9;
  const double bytes = values.at(metrics[0]) + values.at(metrics[1]);
  std::printf("compute-only kernel of %.3f s: DRAM read %.4g B, written %.4g B (%.3g B/s)\n",
              seconds, values.at(metrics[0]), values.at(metrics[1]), bytes / seconds);
  // Far below any memory-bound rate: under 1 GB/s where the copy runs at terabytes per second.
  EXPECT_LT(bytes / seconds, 1e9);
}

TEST(Cupti, EveryGpuFormulationGetsCountersAndPlausibleFigures) {
  if (const auto reason = why_no_counting()) GTEST_SKIP() << *reason;
  const Registry registry = make_default_registry();
  auto sources = make_counter_sources();
  const std::size_t n = 1 << 14;
  const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, 11);
  for (const Implementation& impl : registry.all()) {
    // As runs read them: the all-pairs kernels, tuning variants aside.
    if (impl.info.device != DeviceKind::gpu || impl.info.role == Role::tuning_variant ||
        impl.info.algorithm != Algorithm::all_pairs) {
      continue;
    }
    auto run = impl.prepare(snapshot.bodies, testing::kTestSoftening, {});
    const CounterReadout readout = sources.front()->read(*run, impl.info, n, Ceilings{});
    ASSERT_TRUE(readout.unavailable_reason.empty())
        << impl.info.name << ": " << readout.unavailable_reason;
    const double flops = readout.derived.counted_flops_per_pair.value();
    std::printf("%-18s flops/pair %6.2f  instructions/pair %6.2f  xu/pair %5.2f  DRAM bytes %.3g\n",
                impl.info.name.c_str(), flops, readout.derived.instructions_per_pair.value(),
                readout.derived.xu_instructions_per_pair.value(),
                readout.derived.dram_bytes.value());
    EXPECT_GT(flops, 8) << impl.info.name;
    EXPECT_LT(flops, 40) << impl.info.name;
  }
}

TEST(GpuPeaks, MeasuredCeilingsAreOrdered) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const peaks::GpuPeaks gpu = peaks::measure_gpu_peaks(0);
  ASSERT_TRUE(gpu.unavailable_reason.empty()) << gpu.unavailable_reason;
  std::printf(
      "%s: fp32 %.4g, fp64 %.4g FLOP/s, rsqrt %.4g /s, interaction mix %.4g /s, copy %.4g B/s\n",
      gpu.device_name.c_str(), gpu.fp32_flops, gpu.fp64_flops, gpu.rsqrt_per_second,
      gpu.interaction_mix_per_second, gpu.copy_bytes_per_second);
  std::printf("interaction mix: %s\n", gpu.interaction_mix_method.c_str());
  EXPECT_GT(gpu.fp32_flops, gpu.fp64_flops);
  EXPECT_GT(gpu.fp32_flops / 2, gpu.rsqrt_per_second);  // MUFU is narrower than the FMA pipes
  // The mix cannot beat its FFMAs alone, nor its rsqrts alone.
  const double ffma_per_second = gpu.fp32_flops / 2;
  EXPECT_LT(gpu.interaction_mix_per_second, ffma_per_second / peaks::kInteractionMixFp32 * 1.02);
  EXPECT_LT(gpu.interaction_mix_per_second, gpu.rsqrt_per_second * 1.02);
  EXPECT_GT(gpu.interaction_mix_per_second,
            0.5 * ffma_per_second / (peaks::kInteractionMixFp32 + 1));
  EXPECT_GT(gpu.copy_bytes_per_second, 1e11);
}

#endif  // NBODY_HAVE_CUDA

}  // namespace
}  // namespace nbody
