#pragma once
// Snapshots of a time integration and initial conditions from files, in HDF5 with GADGET-4's
// layout (/Header attributes, /PartType1 datasets) so h5py, yt and pynbody read them; the layout is
// written down in docs/snapshot-format.md. HDF5 is optional at configure time: without it these
// functions throw UsageError saying so.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "nbody/leapfrog.hpp"

namespace nbody {

struct SnapshotHeader {
  double time = 0;  // simulation time (Henon units, G = 1)
  std::int64_t step = 0;
  double softening = 0;
  double dt = 0;                  // 0 for an initial condition written by hand
  std::string implementation;     // e.g. "gpu.tuned"; may be empty
  std::string precision;          // "f32" / "f64"; may be empty
  std::string initial_condition;  // the generator, where generated; may be empty
  std::uint64_t seed = 0;         // the generator's seed, where generated
};

struct SnapshotData {
  SnapshotHeader header;
  PhaseSpaceState state;  // float64 positions, masses and velocities, one velocity per body
};

// Empty when this build can read and write snapshots; otherwise why not, on one line (e.g. "this
// nbody-fair was built without HDF5 (install libhdf5-dev and reconfigure)").
std::optional<std::string> snapshot_io_unavailable_reason();

// Writes atomically (a temporary file in the same folder, then a rename), so an interrupted run
// never leaves half a snapshot and an existing file is replaced whole. Throws UsageError (one line
// naming the path) when the folder is missing or unwritable or the build has no HDF5, and
// std::invalid_argument when `data` is not a state (no bodies, or velocities not one per body).
void write_snapshot(const std::filesystem::path& path, const SnapshotData& data);

// Reads a snapshot or an initial condition in the layout above, whoever wrote it. Throws UsageError
// with one line naming the file and what is wrong: not there, not HDF5, a missing group, dataset or
// attribute, shapes that disagree, N = 0, a non-finite value (naming the dataset and index), a
// negative mass, particles of a type other than PartType1, a multi-file snapshot.
SnapshotData read_snapshot(const std::filesystem::path& path);

// Snapshot number `index` in `folder`, named as GADGET names them: snapshot_000.hdf5,
// snapshot_001.hdf5, ..., snapshot_1000.hdf5. Throws std::invalid_argument for a negative index.
std::filesystem::path snapshot_path(const std::filesystem::path& folder, int index);

}  // namespace nbody
