#include "nbody/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "nbody/errors.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;

// What stat says of `path`, in the words of a refusal; nothing where it found the entry.
std::optional<std::string> why_not_found(const fs::path& path, fs::file_status& status,
                                         const char* missing) {
  std::error_code ec;
  status = fs::status(path, ec);
  if (ec == std::errc::permission_denied) return "permission denied";
  if (!fs::exists(status) || ec == std::errc::not_a_directory) return missing;
  if (ec) return ec.message();
  return std::nullopt;
}

// Whether this process may read (and, for a folder, look into) `path`, as the kernel will judge
// it when the file is opened: by the effective user, as root too.
bool may_access(const fs::path& path, int mode) {
  return ::faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0;
}

}  // namespace

void write_file_atomically(const fs::path& path, std::string_view bytes) {
  const fs::path temporary =
      path.parent_path() / fmt::format(".{}.tmp{}", path.filename().string(), ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw std::runtime_error(fmt::format("cannot write {}", temporary.string()));
    }
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw std::runtime_error(
        fmt::format("cannot rename {} to {}", temporary.string(), path.string()));
  }
}

std::optional<std::string> why_not_an_input_file(const fs::path& path) {
  fs::file_status status;
  if (auto why = why_not_found(path, status, "no such file")) return why;
  switch (status.type()) {
    case fs::file_type::regular:
      if (!may_access(path, R_OK)) return "permission denied";
      return std::nullopt;
    case fs::file_type::directory:
      return "it is a folder, not a file";
    case fs::file_type::fifo:
      return "it is a FIFO (named pipe), not a regular file";
    case fs::file_type::block:
    case fs::file_type::character:
      return "it is a device, not a regular file";
    case fs::file_type::socket:
      return "it is a socket, not a regular file";
    default:
      return "it is not a regular file";
  }
}

std::optional<std::string> why_not_an_input_folder(const fs::path& path) {
  fs::file_status status;
  if (auto why = why_not_found(path, status, "no such folder")) return why;
  if (!fs::is_directory(status)) return "it is not a folder";
  if (!may_access(path, R_OK | X_OK)) return "permission denied";
  return std::nullopt;
}

void require_input_file(const fs::path& path) {
  if (const auto why = why_not_an_input_file(path)) {
    throw UsageError(fmt::format("cannot read {}: {}", path.string(), *why));
  }
}

}  // namespace nbody
