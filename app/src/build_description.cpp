// What this build is: versions, compilers, flags and libraries (FAIRNESS.md rule 7).
#include "nbody/app/build_description.hpp"

#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <oneapi/tbb/version.h>
#include <CLI/Version.hpp>
#include <nlohmann/json.hpp>
#include <xsimd/config/xsimd_config.hpp>

#include "nbody/build_info.hpp"
#include "nbody/cpu/simd_runs.hpp"
#if NBODY_HAVE_MPI
#include "nbody/distributed/mpi.hpp"
#endif

namespace nbody {

BuildRecord describe_build() {
  BuildRecord build;
  build.tool_version = build_info::kToolVersion;
  build.build_type = build_info::kBuildType;
  build.cxx_compiler = build_info::kCxxCompiler;
  build.cxx_flags = build_info::kCxxFlags;
  build.cuda_compiler = build_info::kCudaCompiler;
  build.cuda_flags = build_info::kCudaFlags;
  build.cuda_architectures = build_info::kCudaArchitectures;
  build.libraries = {
      {"oneTBB", TBB_VERSION_STRING},
      {"xsimd",
       fmt::format("{}.{}.{}", XSIMD_VERSION_MAJOR, XSIMD_VERSION_MINOR, XSIMD_VERSION_PATCH)},
      {"fmt",
       fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
      {"nlohmann_json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR,
                                    NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
      {"CLI11", CLI11_VERSION},
      {"benchmark", build_info::kBenchmarkVersion},
  };
#if NBODY_HAVE_MPI
  build.libraries["MPI"] = distributed::MpiSession::library_version();
#endif
  return build;
}

std::string describe_version() {
  namespace simd = cpu::simd;
  std::string text = fmt::format("nbody-fair {} ({} build, {})\n", build_info::kToolVersion,
                                 build_info::kBuildType, build_info::kCxxCompiler);
  if (std::string_view(build_info::kCudaCompiler).empty()) {
    text += "CUDA: built without CUDA (CPU formulations only)\n";
  } else {
    text += fmt::format("CUDA: {}, architectures {}\n", build_info::kCudaCompiler,
                        build_info::kCudaArchitectures);
  }
  text += build_info::kHaveCupti ? "CUPTI: in (GPU hardware counters)\n"
                                 : "CUPTI: not in (no GPU hardware counters)\n";
  if (std::string_view(build_info::kMpiStandard).empty()) {
    text += fmt::format("MPI: not in: {} (one process only)\n", build_info::kMpiUnavailableReason);
  } else {
#if NBODY_HAVE_MPI
    text += fmt::format("MPI: {} (MPI {}): runs decompose under mpirun\n",
                        distributed::MpiSession::library_version(), build_info::kMpiStandard);
#endif
  }
  std::vector<std::string_view> isas;
  for (const IsaInfo& isa : compiled_isas()) isas.push_back(isa.name);
  const std::optional<simd::Isa> widest = simd::widest_isa();
  text += fmt::format("CPU SIMD kernels: {}; widest on this CPU: {}", fmt::join(isas, ", "),
                      widest ? simd::isa_name(*widest) : "none (this CPU runs none of them)");
  return text;
}

std::string mpi_unavailable_reason() {
  return build_info::kMpiUnavailableReason;
}

}  // namespace nbody
