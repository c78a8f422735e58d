#include "nbody/app/launcher.hpp"

#include <cstdlib>
#include <string>

namespace nbody {
namespace {

std::optional<int> integer_variable(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1'000'000'000L) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace

std::optional<LauncherWorld> mpi_launcher_world() {
  for (const auto& [rank_name, size_name] :
       {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        std::pair{"PMI_RANK", "PMI_SIZE"}, std::pair{"PMIX_RANK", "SLURM_NTASKS"}}) {
    if (const std::optional<int> rank = integer_variable(rank_name)) {
      return LauncherWorld{.rank = *rank, .size = integer_variable(size_name).value_or(0)};
    }
  }
  return std::nullopt;
}

}  // namespace nbody
