#pragma once
// Whether an MPI launcher (mpirun, mpiexec, srun) started this process, read from the environment
// the launcher sets, before and without MPI itself: the program initializes MPI only then, so that
// without a launcher, or with one rank, it runs exactly as a plain process.
#include <optional>

namespace nbody {

struct LauncherWorld {
  int rank = 0;
  int size = 0;  // 0: the launcher does not say (PMIx without Slurm's task count)
};

// Open MPI's OMPI_COMM_WORLD_{RANK,SIZE}, the PMI_{RANK,SIZE} of MPICH's Hydra, Intel MPI and
// srun --mpi=pmi2, or PMIX_RANK (with SLURM_NTASKS where set); empty where none is set.
std::optional<LauncherWorld> mpi_launcher_world();

}  // namespace nbody
