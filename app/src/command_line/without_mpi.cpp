// A build without MPI, started by an MPI launcher on several ranks: it cannot join them.
#include <string>

#include <fmt/format.h>

#include "command_line/exit_codes.hpp"
#include "command_line/program.hpp"
#include "nbody/app/build_description.hpp"

namespace nbody::commands {

int run_under_mpirun(int, char**, const LauncherWorld& launched, Program) {
  if (launched.rank == 0) {
    fmt::print(stderr, "nbody-fair: started by an MPI launcher on {} ranks, but {}\n",
               launched.size > 0 ? std::to_string(launched.size) : "several",
               mpi_unavailable_reason());
  }
  return kExitUsage;
}

}  // namespace nbody::commands
