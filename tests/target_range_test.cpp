// Decomposition by target range: the balanced slices, and every CPU formulation that
// takes a range computing exactly its slice of the whole run's accelerations; those that refuse
// one (symmetric pairs, the GPU for now) say why before anything runs.
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "awkward_sizes.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/cpu/simd_runs.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/target_range.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

using nbody::testing::kAwkwardSizes;
constexpr int kPartCounts[] = {2, 3};

TEST(TargetRange, BalancedSlicesCoverEveryBodyOnceInOrder) {
  for (std::size_t n = 0; n <= 70; ++n) {
    for (int parts = 1; parts <= 9; ++parts) {
      std::size_t next = 0, smallest = n, largest = 0;
      for (int part = 0; part < parts; ++part) {
        const TargetRange slice = balanced_slice(n, part, parts);
        EXPECT_EQ(slice.begin, next) << "n " << n << ", part " << part << " of " << parts;
        EXPECT_LE(slice.begin, slice.end);
        next = slice.end;
        smallest = std::min(smallest, slice.size());
        largest = std::max(largest, slice.size());
      }
      EXPECT_EQ(next, n) << "n " << n << ", " << parts << " parts";
      EXPECT_LE(largest - smallest, 1u) << "n " << n << ", " << parts << " parts";
    }
  }
  EXPECT_EQ(balanced_slice(7, 0, 3), (TargetRange{0, 3}));
  EXPECT_EQ(balanced_slice(7, 2, 3), (TargetRange{5, 7}));
  EXPECT_EQ(balanced_slice(1, 1, 2), (TargetRange{1, 1}));  // more parts than bodies: empty
  EXPECT_THROW(balanced_slice(7, 3, 3), std::invalid_argument);
  EXPECT_THROW(balanced_slice(7, 0, 0), std::invalid_argument);
}

TEST(TargetRange, ResolvesToAllBodiesUnlessGivenAndRefusesRangesOutsideThem) {
  EXPECT_EQ(resolve_targets(std::nullopt, 5), (TargetRange{0, 5}));
  EXPECT_EQ(resolve_targets(TargetRange{2, 4}, 5), (TargetRange{2, 4}));
  EXPECT_EQ(resolve_targets(TargetRange{5, 5}, 5), (TargetRange{5, 5}));
  EXPECT_THROW(resolve_targets(TargetRange{2, 6}, 5), std::invalid_argument);
  EXPECT_THROW(resolve_targets(TargetRange{3, 2}, 5), std::invalid_argument);
  EXPECT_FALSE(is_partial(std::nullopt, 5));
  EXPECT_FALSE(is_partial(TargetRange{0, 5}, 5));
  EXPECT_TRUE(is_partial(TargetRange{0, 4}, 5));
}

// Whether `impl` takes a partial range, asked as the runner asks: size_limit_reason.
bool takes_target_ranges(const Implementation& impl) {
  if (!impl.size_limit_reason) return true;
  ExecutionOptions options;
  options.targets = TargetRange{0, 1};
  return !impl.size_limit_reason(2, options).has_value();
}

// The ISAs `impl` runs on here: each one this CPU has where it takes a choice, else its own.
std::vector<std::string> isas_of(const Implementation& impl) {
  if (!impl.info.isa_choice) return {""};
  std::vector<std::string> isas;
  for (const IsaInfo& isa : compiled_isas()) {
    if (isa_available(isa.isa)) isas.emplace_back(isa.name);
  }
  return isas;
}

void expect_slices_equal_whole(const Implementation& impl, const std::string& isa,
                               std::uint64_t seed) {
  for (const std::size_t n : kAwkwardSizes) {
    const Snapshot snapshot = make_initial_condition(InitialCondition::plummer, n, seed);
    ExecutionOptions all;
    all.isa = isa;
    auto whole = impl.prepare(snapshot.bodies, testing::kTestSoftening, all);
    whole->evaluate(PreparedRun::Scope::kernel);
    const std::vector<Vec3<double>> expected = whole->accelerations();
    ASSERT_EQ(expected.size(), n);
    for (const int parts : kPartCounts) {
      std::vector<Vec3<double>> joined;
      for (int part = 0; part < parts; ++part) {
        ExecutionOptions options = all;
        options.targets = balanced_slice(n, part, parts);
        auto slice = impl.prepare(snapshot.bodies, testing::kTestSoftening, options);
        slice->evaluate(PreparedRun::Scope::kernel);
        const std::vector<Vec3<double>> got = slice->accelerations();
        ASSERT_EQ(got.size(), options.targets->size())
            << "N=" << n << " part " << part << " of " << parts;
        joined.insert(joined.end(), got.begin(), got.end());
      }
      ASSERT_EQ(joined.size(), n);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::memcmp(&joined[i], &expected[i], sizeof(Vec3<double>)), 0)
            << "N=" << n << ", " << parts << " parts: body " << i << " is (" << joined[i].x << ", "
            << joined[i].y << ", " << joined[i].z << "), whole run (" << expected[i].x << ", "
            << expected[i].y << ", " << expected[i].z << ")";
      }
    }
  }
}

// Every all-pairs CPU formulation (and tuning variant) sums each target over the same sources in
// the same order whichever other targets it computes, so the slices are bit-identical to the
// whole run: compared exactly, not within the tolerance. On every ISA this CPU has: each ISA's
// kernel steps over its own number of targets, so each widens a slice to other bounds.
TEST(TargetRange, CpuSlicesConcatenatedEqualTheWholeRunExactly) {
  const Registry registry = make_default_registry();
  const auto cpu = registry.where([](const ImplementationInfo& i) {
    return i.device == DeviceKind::cpu && i.pairs == PairScheme::all_pairs &&
           i.algorithm == Algorithm::all_pairs && i.algorithm == Algorithm::all_pairs;
  });
  ASSERT_FALSE(cpu.empty());
  const std::uint64_t seed = testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set NBODY_TEST_SEED to repeat)");
  for (const Implementation* impl : cpu) {
    if (impl->unavailable_reason()) continue;
    ASSERT_TRUE(takes_target_ranges(*impl)) << impl->info.name;
    for (const std::string& isa : isas_of(*impl)) {
      SCOPED_TRACE(impl->info.name + " isa '" + isa + "'");
      expect_slices_equal_whole(*impl, isa, seed);
    }
  }
}

// A slice keeps computing its own targets after new bodies arrive (time integration).
TEST(TargetRange, CpuSliceFollowsNewBodies) {
  const Registry registry = make_default_registry();
  const Snapshot before = make_initial_condition(InitialCondition::uniform_ball, 100, 3);
  const Snapshot after = make_initial_condition(InitialCondition::uniform_ball, 100, 4);
  for (const Implementation* impl : registry.where([](const ImplementationInfo& i) {
         return i.device == DeviceKind::cpu && i.pairs == PairScheme::all_pairs &&
                i.algorithm == Algorithm::all_pairs && i.role != Role::tuning_variant;
       })) {
    if (impl->unavailable_reason()) continue;
    ExecutionOptions options;
    options.targets = TargetRange{37, 71};
    auto slice = impl->prepare(before.bodies, testing::kTestSoftening, options);
    slice->evaluate(PreparedRun::Scope::kernel);
    slice->set_bodies(after.bodies);
    slice->evaluate(PreparedRun::Scope::kernel);
    auto whole = impl->prepare(after.bodies, testing::kTestSoftening, {});
    whole->evaluate(PreparedRun::Scope::kernel);
    const std::vector<Vec3<double>> got = slice->accelerations(), all = whole->accelerations();
    ASSERT_EQ(got.size(), 34u) << impl->info.name;
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(std::memcmp(&got[k], &all[37 + k], sizeof(Vec3<double>)), 0)
          << impl->info.name << " body " << 37 + k;
    }
  }
}

// Formulations that cannot compute a slice say why before anything is allocated, and refuse to
// prepare one; the whole range stays theirs (CPU). Symmetric pairs refuse by design.
TEST(TargetRange, FormulationsThatRefuseRangesSayWhy) {
  const Registry registry = make_default_registry();
  // Symmetric pairs (CPU and GPU) put reactions on every body; every all-pairs formulation, GPU
  // ones included, takes a slice.
  const auto refusing =
      registry.where([](const ImplementationInfo& i) { return i.pairs == PairScheme::symmetric; });
  ASSERT_FALSE(refusing.empty());
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 64, 5);
  for (const Implementation* impl : refusing) {
    ExecutionOptions partial;
    partial.targets = TargetRange{0, 32};
    ASSERT_TRUE(impl->size_limit_reason) << impl->info.name;
    const std::optional<std::string> reason = impl->size_limit_reason(64, partial);
    ASSERT_TRUE(reason.has_value()) << impl->info.name;
    EXPECT_NE(reason->find("target range"), std::string::npos) << *reason;
    EXPECT_THROW(impl->prepare(snapshot.bodies, testing::kTestSoftening, partial),
                 std::invalid_argument)
        << impl->info.name;
    if (impl->info.device == DeviceKind::cpu) {
      ExecutionOptions whole;
      whole.targets = TargetRange{0, 64};
      EXPECT_FALSE(impl->size_limit_reason(64, whole).has_value()) << impl->info.name;
    }
  }
}

// The host leapfrog integrates every body: a slice is the decomposed simulation's.
TEST(TargetRange, HostSimulationRefusesASlice) {
  const Registry registry = make_default_registry();
  const Snapshot snapshot = make_initial_condition(InitialCondition::uniform_ball, 16, 5);
  SimulationSetup setup{.bodies = snapshot.bodies,
                        .velocities = snapshot.velocities,
                        .softening = testing::kTestSoftening,
                        .execution = {}};
  setup.execution.targets = TargetRange{0, 8};
  EXPECT_THROW(make_simulation(*registry.find("cpu.soa"), setup), std::invalid_argument);
}

}  // namespace
}  // namespace nbody
