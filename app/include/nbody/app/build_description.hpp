#pragma once
// What this build is (FAIRNESS.md rule 7): the program's own version, compilers, flags, libraries.
#include "nbody/results.hpp"

namespace nbody {

BuildRecord describe_build();

}  // namespace nbody
