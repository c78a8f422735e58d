#include "nbody/files.hpp"

#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace nbody {

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path temporary =
      path.parent_path() / fmt::format(".{}.tmp{}", path.filename().string(), ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw std::runtime_error(fmt::format("cannot write {}", temporary.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw std::runtime_error(
        fmt::format("cannot rename {} to {}", temporary.string(), path.string()));
  }
}

}  // namespace nbody
