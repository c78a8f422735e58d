#pragma once
// What this build is (FAIRNESS.md rule 7): the program's own version, compilers, flags, libraries.
#include <string>

#include "nbody/results.hpp"

namespace nbody {

BuildRecord describe_build();
// What `nbody-fair --version` prints: the version and the features of this build (CUDA and its
// architectures, CUPTI, MPI, the SIMD ISAs of the CPU kernels) beside the widest ISA this CPU has.
std::string describe_version();
// Why this build cannot decompose a run over MPI ranks (built without MPI), in words.
std::string mpi_unavailable_reason();

}  // namespace nbody
