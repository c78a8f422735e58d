#pragma once
// Runs and simulations decomposed over the ranks of a Decomposition by target range (issue 15):
// each rank prepares the formulation on its balanced slice of the bodies (ExecutionOptions::
// targets), computes that slice's accelerations from all N sources, and the slices are
// all-gathered with MPI_Allgatherv, so that every rank holds the whole result. Wrapped in a
// registry, they let the suite (run, validate, simulate) measure a cluster exactly as it measures
// one process: the same runner, timing and reports on every rank, rank 0 writing.
#include <memory>
#include <span>

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
std::unique_ptr<PreparedRun> prepare_decomposed(const Implementation& implementation,
                                                std::span<const Body<double>> bodies,
                                                double softening, const ExecutionOptions& options,
                                                Decomposition& decomposition);

// The host leapfrog (nbody/leapfrog_updates.hpp, in the formulation's precision, with its
// threads, as the one-process host simulation) over this rank's slice: each step kicks and drifts
// the slice, all-gathers the positions (x, y, z in the formulation's precision: N x 12 bytes in
// float32; the masses, which every rank has from the setup, never travel), evaluates the slice's
// forces and kicks it again. state() all-gathers the velocities. The trajectory is the one-process
// simulation's, bit for bit: every body's arithmetic is the same. A collective like the run.
std::unique_ptr<Simulation> make_decomposed_simulation(const Implementation& implementation,
                                                       const SimulationSetup& setup,
                                                       Decomposition& decomposition);

// Every formulation of `local`, decomposed over the ranks: prepare gives prepare_decomposed's
// run, the simulation make_decomposed_simulation's (CPU formulations; the GPU's device
// simulations are not decomposed yet). Availability is agreed once, here (a formulation
// unavailable on any rank is unavailable on all, with that rank's reason), and size_limit_reason
// at each call, on every rank's slice (a formulation that refuses a slice, like cpu.tbb.symmetric,
// is skipped with its reason). Option checks are local's: `local` must outlive the result. Its
// construction and size_limit_reason are collectives.
Registry decomposed_registry(const Registry& local, Decomposition& decomposition);

}  // namespace nbody::distributed
