// The CUPTI Range Profiler session (CUDA 13 API). Sequence, per NVIDIA's range-profiling
// tutorial: profiler initialize, chip name, host object and config image,
// range profiler enable, counter-data image, set config (auto range, kernel replay), start, work,
// stop, decode, evaluate per range, and everything undone in reverse order (RAII).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "nbody/profiler/cupti.hpp"

namespace nbody::profiler {
namespace {

// Failures travel as this inside this file only; the public functions turn it into a reason.
struct CuptiFailure {
  std::string what;
};

std::string explain(CUptiResult status) {
  switch (status) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "insufficient privileges for GPU performance counters (ERR_NVGPUCTRPERM: run as "
             "root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0)";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "a MIG instance: its counters cannot be profiled";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return "a virtualised GPU without profiling support";
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return "a CMP device: profiling not supported";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "another profiler (ncu, nsys, a second session) holds the counters";
    default: {
      const char* text = nullptr;
      cuptiGetResultString(status, &text);
      return text != nullptr ? text : "CUPTI error " + std::to_string(static_cast<int>(status));
    }
  }
}

// NBODY_CUPTI_TRACE=1 prints each step to stderr: where a driver or CUPTI problem stops.
void trace(const char* step) {
  if (const char* on = std::getenv("NBODY_CUPTI_TRACE"); on != nullptr && *on == '1') {
    std::fprintf(stderr, "cupti: %s\n", step);
  }
}

void check(CUptiResult status, const char* call) {
  trace(call);
  if (status != CUPTI_SUCCESS) throw CuptiFailure{std::string(call) + ": " + explain(status)};
}

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear a sticky "no device" error
    throw CuptiFailure{std::string(call) + ": " + cudaGetErrorString(status)};
  }
}

class ProfilerInitialization {
 public:
  ProfilerInitialization() {
    CUpti_Profiler_Initialize_Params params{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    check(cuptiProfilerInitialize(&params), "cuptiProfilerInitialize");
  }
  ~ProfilerInitialization() {
    CUpti_Profiler_DeInitialize_Params params{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
    trace("cuptiProfilerDeInitialize");
    cuptiProfilerDeInitialize(&params);
  }
  ProfilerInitialization(const ProfilerInitialization&) = delete;
  ProfilerInitialization& operator=(const ProfilerInitialization&) = delete;
};

// The host object: metric names, config images and evaluation for one chip. Loads libnvperf_host.
class HostObject {
 public:
  // No counter-availability image, as in NVIDIA's range-profiling tutorial: metric support is
  // checked per name below, and an image would have to outlive the object.
  explicit HostObject(const std::string& chip) {
    CUpti_Profiler_Host_Initialize_Params params{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    params.pChipName = chip.c_str();
    params.pCounterAvailabilityImage = nullptr;
    const CUptiResult status = cuptiProfilerHostInitialize(&params);
    if (status != CUPTI_SUCCESS) {
      throw CuptiFailure{"cuptiProfilerHostInitialize(" + chip + "): " + explain(status) +
                         " (libcupti loads libnvperf_host.so from the library path)"};
    }
    object_ = params.pHostObject;
  }
  ~HostObject() {
    CUpti_Profiler_Host_Deinitialize_Params params{
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    params.pHostObject = object_;
    trace("cuptiProfilerHostDeinitialize");
    cuptiProfilerHostDeinitialize(&params);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  MetricCheck check_metric(const std::string& name) const {
    CUpti_Profiler_Host_GetMetricProperties_Params params{
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    params.pHostObject = object_;
    params.pMetricName = name.c_str();
    MetricCheck result{.name = name, .valid = false, .description = {}, .unit = {}};
    if (cuptiProfilerHostGetMetricProperties(&params) == CUPTI_SUCCESS) {
      result.valid = true;
      result.description = params.pDescription != nullptr ? params.pDescription : "";
      result.unit = params.pDimUnit != nullptr ? params.pDimUnit : "";
    }
    return result;
  }

  // The config image scheduling `metrics`, and the replay passes it needs.
  std::vector<std::uint8_t> config_image(const std::vector<const char*>& metrics,
                                         std::size_t& passes) {
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = object_;
    add.ppMetricNames = const_cast<const char**>(metrics.data());
    add.numMetrics = metrics.size();
    check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
    CUpti_Profiler_Host_GetConfigImageSize_Params size{
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = object_;
    check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    std::vector<std::uint8_t> image(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params get{
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    get.pHostObject = object_;
    get.configImageSize = image.size();
    get.pConfigImage = image.data();
    check(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage");
    CUpti_Profiler_Host_GetNumOfPasses_Params count{
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    count.configImageSize = image.size();
    count.pConfigImage = image.data();
    check(cuptiProfilerHostGetNumOfPasses(&count), "cuptiProfilerHostGetNumOfPasses");
    passes = count.numOfPasses;
    return image;
  }

  std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range,
                               const std::vector<const char*>& metrics) const {
    std::vector<double> values(metrics.size());
    CUpti_Profiler_Host_EvaluateToGpuValues_Params params{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    params.pHostObject = object_;
    params.pCounterDataImage = counter_data.data();
    params.counterDataImageSize = counter_data.size();
    params.rangeIndex = range;
    params.ppMetricNames = const_cast<const char**>(metrics.data());
    params.numMetrics = metrics.size();
    params.pMetricValues = values.data();
    check(cuptiProfilerHostEvaluateToGpuValues(&params), "cuptiProfilerHostEvaluateToGpuValues");
    return values;
  }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

// More launches than one kernel-scope evaluation makes; beyond this, ranges would be dropped.
constexpr std::size_t kMaxRanges = 64;
// Kernel replay submits every pass itself; the loop only guards against a surprise.
constexpr int kMaxWorkRepetitions = 64;

std::vector<const char*> c_strings(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  for (const std::string& name : names) out.push_back(name.c_str());
  return out;
}

class RangeProfiler {
 public:
  explicit RangeProfiler(CUcontext context) {
    CUpti_RangeProfiler_Enable_Params params{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    params.ctx = context;
    check(cuptiRangeProfilerEnable(&params), "cuptiRangeProfilerEnable");
    object_ = params.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    CUpti_RangeProfiler_Disable_Params params{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    params.pRangeProfilerObject = object_;
    trace("cuptiRangeProfilerDisable");
    cuptiRangeProfilerDisable(&params);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // An initialized counter-data image with room for kMaxRanges ranges of `metrics`.
  std::vector<std::uint8_t> counter_data_image(const std::vector<const char*>& metrics) const {
    CUpti_RangeProfiler_GetCounterDataSize_Params size{
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = object_;
    size.pMetricNames = const_cast<const char**>(metrics.data());
    size.numMetrics = metrics.size();
    size.maxNumOfRanges = kMaxRanges;
    size.maxNumRangeTreeNodes = kMaxRanges;
    check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<std::uint8_t> counter_data(size.counterDataSize);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params initialize{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    initialize.pRangeProfilerObject = object_;
    initialize.counterDataSize = counter_data.size();
    initialize.pCounterData = counter_data.data();
    check(cuptiRangeProfilerCounterDataImageInitialize(&initialize),
          "cuptiRangeProfilerCounterDataImageInitialize");
    return counter_data;
  }

  // One range per kernel launch (auto range), each kernel replayed for every pass `config` needs.
  void configure(std::vector<std::uint8_t>& config, std::vector<std::uint8_t>& counter_data) const {
    CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    set.pRangeProfilerObject = object_;
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    set.range = CUPTI_AutoRange;
    set.replayMode = CUPTI_KernelReplay;
    set.maxRangesPerPass = kMaxRanges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 0;  // as NVIDIA's auto-range tutorial; some versions want 1
    if (cuptiRangeProfilerSetConfig(&set) != CUPTI_SUCCESS) {
      set.targetNestingLevel = 1;
      check(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");
    }
  }

  // `work` between start and stop until CUPTI says every pass was submitted.
  void profile(const std::function<void()>& work) const {
    bool all_passes_submitted = false;
    for (int repetition = 0; !all_passes_submitted && repetition < kMaxWorkRepetitions;
         ++repetition) {
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = object_;
      check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
      trace("work");
      work();
      check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = object_;
      check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
      all_passes_submitted = stop.isAllPassSubmitted != 0;
    }
    if (!all_passes_submitted) throw CuptiFailure{"kernel replay did not complete its passes"};
  }

  // The counters into the counter-data image; a dropped range fails the whole profile.
  void decode() const {
    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = object_;
    check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
    if (decode.numOfRangeDropped != 0) {
      throw CuptiFailure{fmt::format("{} kernel launches dropped (more than {} per evaluation)",
                                     decode.numOfRangeDropped, kMaxRanges)};
    }
  }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

// Each range of a decoded counter-data image, named, with the value of each of `names` (also
// as C strings: `c_names`).
std::vector<RangeValues> read_ranges(const HostObject& host,
                                     const std::vector<std::uint8_t>& counter_data,
                                     const std::vector<std::string>& names,
                                     const std::vector<const char*>& c_names) {
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges == 0) throw CuptiFailure{"no kernel was launched under the profiler"};
  std::vector<RangeValues> ranges;
  for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range_info{
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    range_info.pCounterDataImage = counter_data.data();
    range_info.counterDataImageSize = counter_data.size();
    range_info.rangeIndex = range;
    range_info.rangeDelimiter = "/";
    RangeValues values;
    if (cuptiRangeProfilerCounterDataGetRangeInfo(&range_info) == CUPTI_SUCCESS &&
        range_info.rangeName != nullptr) {
      values.name = range_info.rangeName;
    }
    trace("evaluate range");
    const std::vector<double> evaluated = host.evaluate(counter_data, range, c_names);
    for (std::size_t m = 0; m < names.size(); ++m) values.values[names[m]] = evaluated[m];
    ranges.push_back(std::move(values));
  }
  return ranges;
}

// The current CUcontext through the runtime's driver entry point, so nothing links libcuda and
// the suite still starts on a machine without a driver.
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check_cuda(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000,
                                              cudaEnableDefault, &found),
             "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
  if (found != cudaDriverEntryPointSuccess || function == nullptr) {
    throw CuptiFailure{"cuCtxGetCurrent not found in the driver"};
  }
  CUcontext context = nullptr;
  if (reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS || context == nullptr) {
    throw CuptiFailure{"no current CUDA context"};
  }
  return context;
}

// Device `ordinal` made current, its primary context created: what the profiler attaches to.
CUcontext device_context(int ordinal) {
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (ordinal < 0 || ordinal >= devices) {
    throw CuptiFailure{fmt::format("no CUDA device {}", ordinal)};
  }
  check_cuda(cudaSetDevice(ordinal), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "cudaFree(0) (context creation)");
  trace("current context");
  return current_context();
}

const char* support_level(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
      return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED:
      return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
      return "unsupported";
    default:
      return "unknown";
  }
}

void check_device_supported(int ordinal) {
  CUpti_Profiler_DeviceSupported_Params params{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  params.cuDevice = ordinal;
  params.api = CUPTI_PROFILER_RANGE_PROFILING;
  check(cuptiProfilerDeviceSupported(&params), "cuptiProfilerDeviceSupported");
  if (params.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
  throw CuptiFailure{fmt::format(
      "device does not support range profiling (architecture {}, vGPU {}, SLI {}, confidential "
      "compute {}, CMP {}, WSL {})",
      support_level(params.architecture), support_level(params.vGpu), support_level(params.sli),
      support_level(params.confidentialCompute), support_level(params.cmp),
      support_level(params.wsl))};
}

std::string chip_name(int ordinal) {
  CUpti_Device_GetChipName_Params params{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  params.deviceIndex = static_cast<std::size_t>(ordinal);
  check(cuptiDeviceGetChipName(&params), "cuptiDeviceGetChipName");
  if (params.pChipName == nullptr) throw CuptiFailure{"cuptiDeviceGetChipName returned no name"};
  return params.pChipName;
}

// libcupti dlopens libnvperf_host.so with RTLD_DEEPBIND, which AddressSanitizer's runtime refuses
// by ending the process (google/sanitizers#611): a sanitized build says so instead of profiling.
#if defined(__SANITIZE_ADDRESS__)
constexpr const char* kSanitizerRefusal =
    "this build has AddressSanitizer, which cannot run libcupti's RTLD_DEEPBIND dlopen of "
    "libnvperf_host.so (google/sanitizers#611)";
#else
constexpr const char* kSanitizerRefusal = nullptr;
#endif

}  // namespace

std::optional<std::string> cupti_refusal_in_build() {
  if constexpr (kSanitizerRefusal != nullptr) return kSanitizerRefusal;
  return std::nullopt;
}

MetricValidation validate_metrics(const std::string& chip,
                                  const std::vector<std::string>& metrics) {
  MetricValidation validation;
  if constexpr (kSanitizerRefusal != nullptr) {
    validation.error = kSanitizerRefusal;
    return validation;
  }
  try {
    HostObject host(chip);
    std::vector<std::string> valid;
    for (const std::string& name : metrics) {
      validation.metrics.push_back(host.check_metric(name));
      if (validation.metrics.back().valid) valid.push_back(name);
    }
    if (!valid.empty()) host.config_image(c_strings(valid), validation.passes);
  } catch (const CuptiFailure& failure) {
    validation.error = failure.what;
  }
  return validation;
}

KernelProfile profile_kernels(int ordinal, const std::function<void()>& work,
                              const std::vector<std::string>& metrics) {
  KernelProfile profile;
  if constexpr (kSanitizerRefusal != nullptr) {
    profile.unavailable_reason = kSanitizerRefusal;
    return profile;
  }
  try {
    const CUcontext context = device_context(ordinal);
    ProfilerInitialization initialization;
    check_device_supported(ordinal);
    profile.chip = chip_name(ordinal);
    HostObject host(profile.chip);
    std::vector<std::string> names;
    for (const std::string& name : metrics) {
      (host.check_metric(name).valid ? names : profile.metrics_not_supported).push_back(name);
    }
    if (names.empty()) throw CuptiFailure{"none of the metrics is supported on " + profile.chip};
    const std::vector<const char*> c_names = c_strings(names);  // into `names`, alive throughout
    std::vector<std::uint8_t> config = host.config_image(c_names, profile.passes);

    RangeProfiler profiler(context);
    std::vector<std::uint8_t> counter_data = profiler.counter_data_image(c_names);
    profiler.configure(config, counter_data);
    profiler.profile(work);
    profiler.decode();
    profile.ranges = read_ranges(host, counter_data, names, c_names);
  } catch (const CuptiFailure& failure) {
    profile.unavailable_reason = failure.what;
    profile.ranges.clear();
  } catch (const std::exception& error) {
    profile.unavailable_reason = std::string("the profiled work failed: ") + error.what();
    profile.ranges.clear();
  }
  return profile;
}

}  // namespace nbody::profiler
