#pragma once
// A fresh, empty folder per test, under the system's temporary folder.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace nbody::testing {

// The name carries the test program's process id: test programs that ctest runs side by side
// never share one.
inline std::filesystem::path scratch(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("nbody-fair-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace nbody::testing
