// What the SIMD formulations share, compiled for the baseline of the target (x86-64, ARMv8-A):
// the run-time ISA choice over the ISAs cpu/simd_arch_<id>.cpp were compiled for (nbody/isas.hpp),
// the padded layout, the oneTBB thread count and the tolerances.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>
#include <tbb/info.h>

#include "nbody/cpu/simd_runs.hpp"
#include "nbody/errors.hpp"

namespace nbody::cpu::simd {
namespace {

// Where padding bodies sit: far enough that their (zero-mass) terms cannot be singular, near
// enough that d^-3 stays a normal float (no denormal slow path).
constexpr float kPaddingCoordinate = 1.0e4f;

std::size_t position_in_list(Isa isa) {
  const std::span<const IsaInfo> isas = compiled_isas();
  const auto found =
      std::find_if(isas.begin(), isas.end(), [isa](const IsaInfo& i) { return i.isa == isa; });
  return static_cast<std::size_t>(found - isas.begin());
}

Isa known_isa(std::string_view forced) {
  if (const std::optional<Isa> isa = find_isa(forced)) return *isa;
  throw UsageError(fmt::format("--isa {}: unknown ISA (known: {})", forced, compiled_isa_names()));
}

}  // namespace

std::string isa_description(Isa isa, Precision precision) {
  const std::size_t lanes_f32 = kernels_for<float>(isa).lanes;
  const std::size_t lanes = precision == Precision::f32 ? lanes_f32 : lanes_f32 / 2;
  return fmt::format("{}, {} lanes", isa_info(isa).title, lanes);
}

std::optional<Isa> widest_isa() {
  return widest_available_isa();
}

Isa resolve_isa(std::string_view forced, std::optional<Isa> widest) {
  if (!widest) {
    throw UsageError(fmt::format("the SIMD formulations need one of {}, which this CPU lacks",
                                 compiled_isa_names()));
  }
  if (forced.empty()) return *widest;
  const Isa isa = known_isa(forced);
  if (position_in_list(isa) > position_in_list(*widest)) {
    throw UsageError(
        fmt::format("--isa {}: this CPU supports at most {}", forced, isa_name(*widest)));
  }
  return isa;
}

Isa resolve_isa(std::string_view forced) {
  const std::optional<Isa> widest = widest_isa();
  const Isa isa = resolve_isa(forced, widest);
  if (!isa_available(isa)) {
    throw UsageError(fmt::format("--isa {}: this CPU does not run it", forced));
  }
  return isa;
}

template <>
KernelSet<float> kernels_for<float>(Isa isa) {
  switch (isa) {
#define NBODY_ISA(id, ...) \
  case Isa::id:            \
    return kernels_##id();
#include NBODY_ISAS_INC
#undef NBODY_ISA
  }
  throw std::logic_error("kernels_for: no such ISA");
}

template <>
KernelSet<double> kernels_for<double>(Isa isa) {
  switch (isa) {
#define NBODY_ISA(id, ...) \
  case Isa::id:            \
    return kernels_f64_##id();
#include NBODY_ISAS_INC
#undef NBODY_ISA
  }
  throw std::logic_error("kernels_for: no such ISA");
}

std::uint64_t diagonal_tile_pair_evaluations(std::size_t size, std::size_t lanes) {
  const std::uint64_t blocks = size / lanes;
  const std::uint64_t block_pairs = static_cast<std::uint64_t>(lanes) * lanes;
  return blocks * block_pairs + blocks * (blocks - 1) / 2 * block_pairs;
}

template <class T>
PaddedBodies<T>::PaddedBodies(std::span<const Body<double>> bodies)
    : storage_((bodies.size() + kBodyPadding - 1) / kBodyPadding * kBodyPadding),
      count_(bodies.size()) {
  for (std::size_t i = 0; i < storage_.size(); ++i) {
    const bool real = i < bodies.size();
    storage_.x[i] = real ? static_cast<T>(bodies[i].x) : T(kPaddingCoordinate);
    storage_.y[i] = real ? static_cast<T>(bodies[i].y) : T(kPaddingCoordinate);
    storage_.z[i] = real ? static_cast<T>(bodies[i].z) : T(kPaddingCoordinate);
    storage_.m[i] = real ? static_cast<T>(bodies[i].m) : T(0);
  }
}

template <class T>
void PaddedBodies<T>::assign(std::span<const Body<double>> bodies) {
  if (bodies.size() != count_) throw std::invalid_argument("PaddedBodies::assign: another count");
  for (std::size_t i = 0; i < count_; ++i) {
    storage_.x[i] = static_cast<T>(bodies[i].x);
    storage_.y[i] = static_cast<T>(bodies[i].y);
    storage_.z[i] = static_cast<T>(bodies[i].z);
    storage_.m[i] = static_cast<T>(bodies[i].m);
  }
}

template <class T>
BodiesView<T> PaddedBodies<T>::view() const {
  return {.x = storage_.x.data(),
          .y = storage_.y.data(),
          .z = storage_.z.data(),
          .m = storage_.m.data(),
          .count = count_,
          .padded_count = storage_.size()};
}

template <class T>
AccelerationsView<T> PaddedAccelerations<T>::view() {
  return {.x = storage_.x.data(), .y = storage_.y.data(), .z = storage_.z.data()};
}

template <class T>
std::vector<Vec3<double>> PaddedAccelerations<T>::promoted(TargetRange targets) const {
  std::vector<Vec3<double>> out(targets.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::size_t i = targets.begin + k;
    out[k] = {static_cast<double>(storage_.x[i]), static_cast<double>(storage_.y[i]),
              static_cast<double>(storage_.z[i])};
  }
  return out;
}

template class PaddedBodies<float>;
template class PaddedBodies<double>;
template class PaddedAccelerations<float>;
template class PaddedAccelerations<double>;

TargetRange kernel_bounds(TargetRange targets, std::size_t step) {
  if (targets.size() == 0) return {0, 0};
  return {targets.begin / step * step, (targets.end + step - 1) / step * step};
}

int tbb_threads(const ExecutionOptions& options) {
  const int available = tbb::info::default_concurrency();
  if (options.threads < 0) {
    throw UsageError(fmt::format("--threads {}: must be 0 (all) or positive", options.threads));
  }
  if (options.threads > available) {
    throw UsageError(fmt::format("--threads {}: oneTBB can use at most {} threads here",
                                 options.threads, available));
  }
  return options.threads == 0 ? available : options.threads;
}

std::string_view inv_sqrt_method_name(InvSqrtMethod method) {
  switch (method) {
    case InvSqrtMethod::newton:
      return "newton";
    case InvSqrtMethod::bare_rsqrt:
      return "bare_rsqrt";
    case InvSqrtMethod::sqrt_divide:
      return "sqrt_divide";
    case InvSqrtMethod::cube_series:
      return "cube_series";
  }
  return "unknown";
}

template <class T>
std::string inv_sqrt_detail(const KernelSet<T>& kernels, InvSqrtMethod method) {
  switch (method) {
    case InvSqrtMethod::newton:
      return fmt::format("{} + {} Newton-Raphson step{}", kernels.rsqrt_instruction,
                         kernels.newton_steps, kernels.newton_steps == 1 ? "" : "s");
    case InvSqrtMethod::bare_rsqrt:
      return fmt::format("{} alone", kernels.rsqrt_instruction);
    case InvSqrtMethod::sqrt_divide:
#if defined(__aarch64__)
      return "fsqrt + fdiv";
#else
      return std::is_same_v<T, float> ? "sqrtps + divps" : "sqrtpd + divpd";
#endif
    case InvSqrtMethod::cube_series:
      return fmt::format("{}, then d^-3 by its series to e^{} (no Newton step)",
                         kernels.rsqrt_instruction, kernels.cube_series_terms);
  }
  return "unknown";
}

template std::string inv_sqrt_detail(const KernelSet<float>&, InvSqrtMethod);
template std::string inv_sqrt_detail(const KernelSet<double>&, InvSqrtMethod);

namespace {

// How the kernels of `isa` take 1/sqrt by `method` (empty: the ISA's faster full-accuracy one).
template <class T>
std::string inv_sqrt_optimization(Isa isa, std::optional<InvSqrtMethod> method) {
  const KernelSet<T> kernels = kernels_for<T>(isa);
  const InvSqrtMethod used = method.value_or(kernels.full_accuracy);
  const std::string_view title = isa_info(isa).title;
  if (used == InvSqrtMethod::sqrt_divide) {
    return fmt::format("exact square root, then divide ({} on {})", inv_sqrt_detail(kernels, used),
                       title);
  }
  return fmt::format("{} on {}: {}",
                     method ? "approximate rsqrt"
                            : "1/sqrt by the ISA's faster full-accuracy method, approximate rsqrt",
                     title, inv_sqrt_detail(kernels, used));
}

}  // namespace

std::vector<std::string> simd_kernel_optimizations(Precision precision,
                                                   std::optional<InvSqrtMethod> method,
                                                   std::vector<std::string> own) {
  // Said of the ISA the kernels run here: the widest this CPU runs (else the list's first).
  const std::optional<Isa> widest = widest_isa();
  const Isa described = widest.value_or(compiled_isas().front().isa);
  const IsaInfo& info = isa_info(described);
  std::vector<std::string> list = {
      "structure of arrays",
      fmt::format("xsimd, ISA chosen at run time ({} here; --isa forces a narrower one)",
                  widest ? isa_description(*widest, precision) : "none"),
      precision == Precision::f64 ? inv_sqrt_optimization<double>(described, method)
                                  : inv_sqrt_optimization<float>(described, method),
      info.fma ? fmt::format("FMA ({})", info.title)
               : fmt::format("no FMA on {}: a multiply and an add", info.title)};
  if (precision == Precision::f64) list.front() = "structure of arrays, float64";
  list.insert(list.end(), own.begin(), own.end());
  return list;
}

std::optional<std::string> simd_unavailable_reason() {
  if (widest_isa()) return std::nullopt;
  return "this CPU lacks SSE4.2, the narrowest ISA the SIMD kernels are built for";
}

Implementation make_simd_implementation(ImplementationInfo info,
                                        decltype(Implementation::prepare) prepare,
                                        decltype(Implementation::size_limit_reason) size_limit) {
  info.device = DeviceKind::cpu;
  info.layout = Layout::soa;
  info.isa_choice = true;
  const bool multithreaded = info.multithreaded;
  return {.info = std::move(info),
          .unavailable_reason = [] { return simd_unavailable_reason(); },
          .prepare = std::move(prepare),
          .threads_used =
              [multithreaded](const ExecutionOptions& options) {
                return multithreaded ? tbb_threads(options) : 1;
              },
          .size_limit_reason = std::move(size_limit)};
}

// Measured worst cases and margins: docs/tolerances.md, section "CPU SIMD/TBB".
Tolerance simd_full_tolerance() {
  // Worst of 40000 inputs per size: L2 7.3 (SSE4.2, N = 2), max 66 (AVX2, N = 7, a body whose
  // forces nearly cancel; cpu.soa reaches 73 there). L2 12 also covers the analytic worst case of
  // one pair after a 12-bit start (about 10).
  return {.unit_roundoff = kFloat32UnitRoundoff,
          .relative_l2_coefficient = 12.0,
          .max_relative_coefficient = 96.0};
}

Tolerance simd_bare_rsqrt_tolerance() {
  // Unit roundoff of a 12-bit rsqrt (rsqrtps: relative error below 1.5 * 2^-12; rsqrt14 is four
  // times better): the rsqrt error, tripled by the cube, dominates every term. Worst of 40000
  // inputs per size: L2 2.2 (N = 2; analytic worst case of one pair 3.2), max 20 (N = 7).
  return {
      .unit_roundoff = 0x1.0p-12, .relative_l2_coefficient = 4.0, .max_relative_coefficient = 32.0};
}

// Measured worst cases and margins: docs/tolerances.md, section "Float64 on the CPU".
Tolerance simd_float64_tolerance() {
  // All-pairs and symmetric kernels alike. Worst of 40000 inputs per size (both generators, every
  // ISA): L2 7.5 (AVX2, N = 2), max 120 (AVX2, N = 16, a body whose forces nearly cancel); of
  // 200000 more at N = 2: L2 9.2 (square root and divide, Plummer), the same for both kernels. The
  // same L2 coefficient as float32's (1.3 times the worst), a max coefficient 1.6 times the worst.
  return {.unit_roundoff = kFloat64UnitRoundoff,
          .relative_l2_coefficient = 12.0,
          .max_relative_coefficient = 192.0};
}

}  // namespace nbody::cpu::simd
