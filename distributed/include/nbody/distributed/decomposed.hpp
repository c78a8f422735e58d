#pragma once
// Runs and simulations decomposed over the ranks of a Decomposition by target range:
// each rank prepares the formulation on its balanced slice of the bodies (ExecutionOptions::
// targets), computes that slice's accelerations from all N sources, and the slices are
// all-gathered with MPI_Allgatherv, so that every rank holds the whole result. GPU formulations
// over a group of ranks (ExecutionOptions::gpu_group) all-gather by NCCL between the GPUs instead.
// Wrapped in a registry, they let the suite (run, validate, simulate) measure a cluster exactly as
// it measures one process: the same runner, timing and reports on every rank, rank 0 writing.
#include <memory>
#include <span>
#include <string>

#include "nbody/bodies.hpp"
#include "nbody/distributed/decomposition.hpp"
#include "nbody/registry.hpp"
#include "nbody/simulation.hpp"

namespace nbody::distributed {

// A run of `implementation` on this rank's slice; every evaluation all-gathers the slices'
// accelerations (in the formulation's precision: N x 12 bytes in float32), so accelerations()
// has all N on every rank. Its Seconds are agreed over the ranks: kernel is the slowest slice's
// computation, total the slowest rank's computation and all-gather, communication total less the
// slowest computation. A collective: every rank prepares and evaluates at the same points.
// `why_not_nccl`: for a GPU formulation, why its slices travel through host memory rather than
// by NCCL (details()["exchange"] says it).
std::unique_ptr<PreparedRun> prepare_decomposed(const Implementation& implementation,
                                                std::span<const Body<double>> bodies,
                                                double softening, const ExecutionOptions& options,
                                                Decomposition& decomposition,
                                                const std::string& why_not_nccl = {});

// The host leapfrog (nbody/leapfrog_updates.hpp, in the formulation's precision, with its
// threads, as the one-process host simulation) over this rank's slice: each step kicks and drifts
// the slice, all-gathers the positions (x, y, z in the formulation's precision: N x 12 bytes in
// float32; the masses, which every rank has from the setup, never travel), evaluates the slice's
// forces and kicks it again. state() all-gathers the velocities. The trajectory is the one-process
// simulation's, bit for bit: every body's arithmetic is the same. A collective like the run.
std::unique_ptr<Simulation> make_decomposed_simulation(const Implementation& implementation,
                                                       const SimulationSetup& setup,
                                                       Decomposition& decomposition,
                                                       const std::string& why_not_nccl = {});

// A GPU formulation over a group of ranks, one GPU each (options.gpu_group, which this process
// joined: GpuGroup::communicator): the formulation's own run, each rank computing its slice on its
// GPU and NCCL all-gathering the accelerations on device buffers. Its Seconds are agreed over the
// ranks as prepare_decomposed's are: kernel is the slowest slice's kernel, communication the time
// beyond it until every rank has every slice, total the slowest rank's evaluation. A failure on
// any rank, in preparing (before any collective) or evaluating, is every rank's. A collective.
std::unique_ptr<PreparedRun> prepare_on_gpu_group(const Implementation& implementation,
                                                  std::span<const Body<double>> bodies,
                                                  double softening, const ExecutionOptions& options,
                                                  Decomposition& decomposition);

// The formulation's own simulation over the group (setup.execution.gpu_group): on the device,
// positions all-gathered by NCCL after each step. Failures are agreed as above; every rank's
// StepSeconds are those of the rank whose steps took longest. A collective.
std::unique_ptr<Simulation> make_gpu_group_simulation(const Implementation& implementation,
                                                      const SimulationSetup& setup,
                                                      Decomposition& decomposition);

// What a decomposed run's or simulation's details()["exchange"] says: MPI_Allgatherv through host
// memory, and why not NCCL where there is a reason.
std::string host_exchange(const std::string& why_not_nccl);

// Every formulation of `local`, decomposed over the ranks: prepare gives prepare_decomposed's
// run, the simulation make_decomposed_simulation's; GPU formulations, where the options carry a
// GPU group (ExecutionOptions::gpu_group), prepare_on_gpu_group's and make_gpu_group_simulation's
// instead, and otherwise say `why_not_nccl` in their details. Availability is agreed once, here (a
// formulation unavailable on any rank is unavailable on all, with that rank's reason), and
// size_limit_reason at each call, on every rank's slice (a formulation that refuses a slice, like
// cpu.tbb.symmetric, is skipped with its reason). Option checks are local's: `local` must outlive
// the result. Its construction and size_limit_reason are collectives.
Registry decomposed_registry(const Registry& local, Decomposition& decomposition,
                             const std::string& why_not_nccl = {});

}  // namespace nbody::distributed
