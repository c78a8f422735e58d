// The scalar CPU formulations against the float64 reference at awkward sizes, both generators.
#include <algorithm>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace nbody {
namespace {

class ScalarFormulation : public ::testing::TestWithParam<std::string> {};

TEST_P(ScalarFormulation, MatchesReferenceWithinTolerance) {
  const Registry registry = make_default_registry();
  const Implementation* impl = registry.find(GetParam());
  ASSERT_NE(impl, nullptr);
  const std::uint64_t seed = testing::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set NBODY_TEST_SEED to repeat)");
  for (const InitialCondition ic : {InitialCondition::uniform_ball, InitialCondition::plummer}) {
    for (const std::size_t n : {1, 2, 3, 7, 31, 1000, 4097}) {
      const testing::ValidationOutcome outcome =
          testing::validate_implementation(*impl, ic, n, seed);
      EXPECT_TRUE(outcome.accepted) << outcome.summary;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, ScalarFormulation, ::testing::Values("cpu.aos", "cpu.soa"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

}  // namespace
}  // namespace nbody
