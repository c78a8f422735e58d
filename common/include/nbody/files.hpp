#pragma once
// Writing files so that no reader, and no interrupted run, ever sees half of one.
#include <filesystem>
#include <string_view>

namespace nbody {

// Writes `bytes` to `path` through a temporary file in the same folder (one per process, so
// several processes may write the same path at once) and a rename. Throws std::runtime_error on
// failure, leaving no temporary behind.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace nbody
