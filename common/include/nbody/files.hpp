#pragma once
// Files the suite writes and reads: written so that no reader, and no interrupted run, ever sees
// half of one; read only where they are what they claim to be.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace nbody {

// Writes `bytes` to `path` through a temporary file in the same folder (one per process, so
// several processes may write the same path at once) and a rename. Throws std::runtime_error on
// failure, leaving no temporary behind.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// Why `path` cannot be read as an input file, or nothing where it can: "no such file",
// "permission denied", "it is a folder, not a file", "it is a FIFO (named pipe), not a regular
// file", and so for devices and sockets. Decided from the file's type and permissions without
// opening it: opening a FIFO waits for a writer, and reading a device may never end.
std::optional<std::string> why_not_an_input_file(const std::filesystem::path& path);

// The same for a folder whose entries are looked up as inputs: "no such folder", "permission
// denied", "it is a file, not a folder", ...
std::optional<std::string> why_not_an_input_folder(const std::filesystem::path& path);

// Throws UsageError "cannot read PATH: REASON" where why_not_an_input_file gives a reason.
void require_input_file(const std::filesystem::path& path);

}  // namespace nbody
