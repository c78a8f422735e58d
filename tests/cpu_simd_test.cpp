// The xsimd and oneTBB formulations against the float64 reference at awkward sizes (every tail of
// every vector width), both generators, each ISA this CPU supports forced in turn; the ISA choice
// and its errors; the symmetric kernel's momentum conservation.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "nbody/cpu/simd_runs.hpp"
#include "nbody/errors.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

using cpu::simd::Isa;

constexpr std::size_t kAwkwardSizes[] = {1, 2, 7, 15, 16, 17, 31, 1000, 4097};
constexpr InitialCondition kGenerators[] = {InitialCondition::uniform_ball,
                                            InitialCondition::plummer};

// Why this CPU cannot run `isa`, or empty.
std::optional<std::string> missing_isa(Isa isa) {
  const std::optional<Isa> widest = cpu::simd::widest_isa();
  if (widest && static_cast<int>(*widest) >= static_cast<int>(isa)) return std::nullopt;
  return "this CPU lacks " + std::string(cpu::simd::isa_name(isa)) +
         " (widest here: " + std::string(widest ? cpu::simd::isa_name(*widest) : "none") + ")";
}

std::string test_name(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '.'; }, '_');
  return text;
}

class SimdFormulation : public ::testing::TestWithParam<std::tuple<std::string, Isa>> {};

TEST_P(SimdFormulation, MatchesReferenceWithinToleranceAtAwkwardSizes) {
  const auto& [name, isa] = GetParam();
  if (const auto reason = missing_isa(isa)) GTEST_SKIP() << *reason;
  const Registry registry = make_default_registry();
  const Implementation* impl = registry.find(name);
  ASSERT_NE(impl, nullptr);
  ASSERT_FALSE(impl->unavailable_reason().has_value());
  const ExecutionOptions options{.threads = 0, .isa = std::string(cpu::simd::isa_name(isa))};
  const std::uint64_t seed = testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set NBODY_TEST_SEED to repeat), isa " +
               options.isa);
  for (const InitialCondition ic : kGenerators) {
    for (const std::size_t n : kAwkwardSizes) {
      const testing::ValidationOutcome outcome =
          testing::validate_implementation(*impl, ic, n, seed, options);
      EXPECT_TRUE(outcome.accepted) << outcome.summary;
    }
  }
}

TEST_P(SimdFormulation, RecordsTheForcedIsaAndThreads) {
  const auto& [name, isa] = GetParam();
  if (const auto reason = missing_isa(isa)) GTEST_SKIP() << *reason;
  const Registry registry = make_default_registry();
  const Implementation* impl = registry.find(name);
  ASSERT_NE(impl, nullptr);
  const ExecutionOptions options{.threads = 0, .isa = std::string(cpu::simd::isa_name(isa))};
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 33, 7);
  const auto run = impl->prepare(snapshot.bodies, testing::kTestSoftening, options);
  const auto details = run->details();
  ASSERT_TRUE(details.contains("isa"));
  EXPECT_EQ(details.at("isa"), options.isa);
  ASSERT_TRUE(details.contains("threads"));
  EXPECT_EQ(details.at("threads"), std::to_string(impl->threads_used(options)));
}

INSTANTIATE_TEST_SUITE_P(
    Cpu, SimdFormulation,
    ::testing::Combine(::testing::Values("cpu.simd", "cpu.simd.approx", "cpu.tbb",
                                         "cpu.tbb.symmetric"),
                       ::testing::Values(Isa::sse4_2, Isa::avx2, Isa::avx512f)),
    [](const auto& param_info) {
      return test_name(std::get<0>(param_info.param) + "_" +
                       std::string(cpu::simd::isa_name(std::get<1>(param_info.param))));
    });

TEST(SimdIsa, DefaultIsTheWidestThisCpuHas) {
  const std::optional<Isa> widest = cpu::simd::widest_isa();
  if (!widest) GTEST_SKIP() << "this CPU lacks SSE4.2";
  EXPECT_EQ(cpu::simd::resolve_isa(""), *widest);
  const Registry registry = make_default_registry();
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 20, 3);
  const auto run = registry.find("cpu.simd")->prepare(snapshot.bodies, 0.01, {});
  EXPECT_EQ(run->details().at("isa"), cpu::simd::isa_name(*widest));
}

TEST(SimdIsa, ForcingAWiderIsaThanTheCpuHasIsAUsageError) {
  EXPECT_THROW(cpu::simd::resolve_isa("avx512f", Isa::avx2), UsageError);
  EXPECT_THROW(cpu::simd::resolve_isa("avx2", Isa::sse4_2), UsageError);
  EXPECT_THROW(cpu::simd::resolve_isa("", std::nullopt), UsageError);
  EXPECT_EQ(cpu::simd::resolve_isa("sse4.2", Isa::avx512f), Isa::sse4_2);
  try {
    cpu::simd::resolve_isa("avx512f", Isa::avx2);
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("at most avx2"), std::string::npos) << e.what();
  }
}

TEST(SimdIsa, AnUnknownIsaIsAUsageErrorFromEveryFormulation) {
  const Registry registry = make_default_registry();
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 8, 1);
  for (const char* name : {"cpu.simd", "cpu.simd.approx", "cpu.tbb", "cpu.tbb.symmetric"}) {
    EXPECT_THROW(registry.find(name)->prepare(snapshot.bodies, 0.01, {.isa = "avx9000"}),
                 UsageError)
        << name;
  }
}

TEST(SimdTbb, ThreadCountIsHonouredAndChecked) {
  const Registry registry = make_default_registry();
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 100, 5);
  for (const char* name : {"cpu.tbb", "cpu.tbb.symmetric"}) {
    const Implementation* impl = registry.find(name);
    EXPECT_TRUE(impl->info.multithreaded);
    EXPECT_EQ(impl->threads_used({.threads = 1}), 1);
    const auto run = impl->prepare(snapshot.bodies, 0.01, {.threads = 1});
    EXPECT_EQ(run->details().at("threads"), "1");
    EXPECT_THROW(impl->threads_used({.threads = -1}), UsageError);
    EXPECT_THROW(impl->prepare(snapshot.bodies, 0.01, {.threads = 1 << 20}), UsageError);
  }
}

// Same kernel, same summation order per target: threads must not change a single bit.
TEST(SimdTbb, AllPairsMatchesSingleThreadBitForBit) {
  const Registry registry = make_default_registry();
  const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, 1001, 11);
  const auto single = registry.find("cpu.simd")->prepare(snapshot.bodies, 0.01, {});
  const auto threaded = registry.find("cpu.tbb")->prepare(snapshot.bodies, 0.01, {});
  single->evaluate(PreparedRun::Scope::kernel);
  threaded->evaluate(PreparedRun::Scope::kernel);
  const auto a = single->accelerations(), b = threaded->accelerations();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].x, b[i].x) << i;
    ASSERT_EQ(a[i].y, b[i].y) << i;
    ASSERT_EQ(a[i].z, b[i].z) << i;
  }
}

// Each pair's force is applied to both bodies with opposite signs, so momentum is conserved to the
// rounding of the sums: measured 2.7e-9 to 3.3e-9 at N = 1000 to 16384, where the all-pairs
// kernels drift 7.7e-9 to 2.7e-8 (docs/tolerances.md).
TEST(SimdTbb, SymmetricConservesMomentum) {
  const Registry registry = make_default_registry();
  const Implementation* impl = registry.find("cpu.tbb.symmetric");
  ASSERT_EQ(impl->info.pairs, PairScheme::symmetric);
  const std::uint64_t seed = testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const InitialCondition ic : kGenerators) {
    for (const std::size_t n : {17, 1000, 4097}) {
      const testing::ValidationOutcome outcome =
          testing::validate_implementation(*impl, ic, n, seed);
      EXPECT_LT(outcome.metrics.net_force_residual, 1e-7) << outcome.summary;
    }
  }
}

TEST(SimdTbb, SymmetricRecordsAboutHalfThePairs) {
  const Registry registry = make_default_registry();
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 4096, 2);
  const auto run = registry.find("cpu.tbb.symmetric")->prepare(snapshot.bodies, 0.01, {});
  const double evaluated = std::stod(run->details().at("pair_evaluations"));
  const double n = 4096;
  // N(N-1)/2 distinct pairs plus the pairs inside each vector block, evaluated from both sides.
  EXPECT_GE(evaluated, n * (n - 1) / 2);
  EXPECT_LE(evaluated, n * n / 2 + n * 16);
}

// What the Newton-Raphson step buys: the bare rsqrt is a different accuracy class.
TEST(SimdAccuracy, NewtonStepBuysAccuracy) {
  const Registry registry = make_default_registry();
  const Implementation* full = registry.find("cpu.simd");
  const Implementation* bare = registry.find("cpu.simd.approx");
  EXPECT_EQ(full->info.accuracy_class, AccuracyClass::full);
  EXPECT_EQ(bare->info.accuracy_class, AccuracyClass::approximate);
  const std::uint64_t seed = testing::test_seed();
  const auto full_outcome =
      testing::validate_implementation(*full, InitialCondition::uniform_ball, 1000, seed);
  const auto bare_outcome =
      testing::validate_implementation(*bare, InitialCondition::uniform_ball, 1000, seed);
  EXPECT_LT(full_outcome.metrics.relative_l2 * 8, bare_outcome.metrics.relative_l2)
      << full_outcome.summary << " vs " << bare_outcome.summary;
}

}  // namespace
}  // namespace nbody
