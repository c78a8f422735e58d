#pragma once
// nbody-fair's commands, parsed and run by one process or by every rank of an MPI launcher's job.
#include "command_line/processes.hpp"
#include "nbody/app/launcher.hpp"

namespace nbody::commands {

// Parses the command line, runs the command it names; returns the exit code. Errors are thrown.
using Program = int (*)(int argc, char** argv, Processes& processes);

// `program` in one process: bad input is one line and exit 2, any other error exit 1.
int run_in_one_process(int argc, char** argv, Program program);

// `program` on every rank of the launcher's job, the suite decomposed over them; without MPI in
// this build, says why not (rank 0) and exits 2.
int run_under_mpirun(int argc, char** argv, const LauncherWorld& launched, Program program);

}  // namespace nbody::commands
