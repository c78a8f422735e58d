#include <stdexcept>

#include <fmt/format.h>

#include "nbody/io/snapshot.hpp"

namespace nbody {

std::filesystem::path snapshot_path(const std::filesystem::path& folder, int index) {
  if (index < 0) throw std::invalid_argument("snapshot_path: a negative snapshot number");
  return folder / fmt::format("snapshot_{:03d}.hdf5", index);
}

}  // namespace nbody
