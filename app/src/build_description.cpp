// What this build is: versions, compilers, flags and libraries (FAIRNESS.md rule 7).
#include "nbody/app/build_description.hpp"

#include <fmt/format.h>
#include <oneapi/tbb/version.h>
#include <CLI/Version.hpp>
#include <nlohmann/json.hpp>
#include <xsimd/config/xsimd_config.hpp>

#include "nbody/build_info.hpp"

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
  return build;
}

}  // namespace nbody
