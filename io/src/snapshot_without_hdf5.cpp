// A build without HDF5: snapshots are unavailable, and say why.
#include "nbody/errors.hpp"
#include "nbody/io/snapshot.hpp"

namespace nbody {

// NBODY_SNAPSHOTS_UNAVAILABLE: set by CMake to why this build has no HDF5 (io/CMakeLists.txt).
std::optional<std::string> snapshot_io_unavailable_reason() {
  return NBODY_SNAPSHOTS_UNAVAILABLE;
}

void write_snapshot(const std::filesystem::path& /*path*/, const SnapshotData& /*data*/) {
  throw UsageError(NBODY_SNAPSHOTS_UNAVAILABLE);
}

SnapshotData read_snapshot(const std::filesystem::path& /*path*/) {
  throw UsageError(NBODY_SNAPSHOTS_UNAVAILABLE);
}

}  // namespace nbody
