// Built when the CUDA toolkit has no CUPTI: every call says so.
#include "nbody/profiler/cupti.hpp"

namespace nbody::profiler {
namespace {
constexpr const char* kReason = "this build has no CUPTI (CUDA::cupti not found at configure time)";
}

std::optional<std::string> cupti_refusal_in_build() {
  return kReason;
}

MetricValidation validate_metrics(const std::string& /*chip*/,
                                  const std::vector<std::string>& /*metrics*/) {
  return {.error = kReason, .metrics = {}, .passes = 0};
}

KernelProfile profile_kernels(int /*ordinal*/, const std::function<void()>& /*work*/,
                              const std::vector<std::string>& /*metrics*/) {
  KernelProfile profile;
  profile.unavailable_reason = kReason;
  return profile;
}

}  // namespace nbody::profiler
