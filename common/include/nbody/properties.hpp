#pragma once
// The properties a formulation and a measurement are described by, as enums with one spelling
// each: the same word in `nbody-fair list`, results.json and every report.
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

namespace nbody {

enum class DeviceKind { cpu, gpu };
enum class Layout { aos, soa };
enum class Precision { f32, f64 };
// Full: within a few ulp per interaction (exact 1/sqrt, GPU rsqrtf, or rsqrt + one Newton step).
// Approximate: a bare 12/14-bit rsqrt; never ranked beside full-accuracy results (FAIRNESS rule 2).
enum class AccuracyClass { full, approximate };
// all_pairs evaluates N^2 interactions; symmetric evaluates N(N-1)/2 pairs and applies each twice
// (Newton's third law), credited N^2 "equivalent" interactions (FAIRNESS rule 4).
enum class PairScheme { all_pairs, symmetric };
// How the forces are found: all_pairs sums every body's term for every target (N^2 interactions,
// credited N^2); barnes_hut groups distant bodies into the cells of a tree, an approximation whose
// error the opening angle theta sets. A tree is credited no interactions: it is compared with the
// all-pairs formulations by time at equal measured accuracy (FAIRNESS rule 9).
enum class Algorithm { all_pairs, barnes_hut };
// What a formulation is for in a comparison (FAIRNESS rule 3):
//   naive_baseline: the plain port of its device, the "naive" side of naive against naive;
//   optimized:      a step of the optimization ladder, competing for "best";
//   tuning_variant: another shape of an optimized kernel, for the tuning tool only: left out of
//                   runs, reports and `list` unless asked for (`--variants`).
enum class Role { naive_baseline, optimized, tuning_variant };
// How one measurement ended.
enum class Status { ok, failed, skipped };

template <class E>
struct EnumNames;  // specialised below: every value with its one spelling

#define NBODY_ENUM_NAMES(E, ...)                                              \
  template <>                                                                 \
  struct EnumNames<E> {                                                       \
    static constexpr std::pair<E, std::string_view> kNames[] = {__VA_ARGS__}; \
  }
NBODY_ENUM_NAMES(DeviceKind, {DeviceKind::cpu, "cpu"}, {DeviceKind::gpu, "gpu"});
NBODY_ENUM_NAMES(Layout, {Layout::aos, "aos"}, {Layout::soa, "soa"});
NBODY_ENUM_NAMES(Precision, {Precision::f32, "f32"}, {Precision::f64, "f64"});
NBODY_ENUM_NAMES(AccuracyClass, {AccuracyClass::full, "full"},
                 {AccuracyClass::approximate, "approximate"});
NBODY_ENUM_NAMES(PairScheme, {PairScheme::all_pairs, "all_pairs"},
                 {PairScheme::symmetric, "symmetric"});
NBODY_ENUM_NAMES(Algorithm, {Algorithm::all_pairs, "all_pairs"},
                 {Algorithm::barnes_hut, "barnes_hut"});
NBODY_ENUM_NAMES(Role, {Role::naive_baseline, "naive_baseline"}, {Role::optimized, "optimized"},
                 {Role::tuning_variant, "tuning_variant"});
NBODY_ENUM_NAMES(Status, {Status::ok, "ok"}, {Status::failed, "failed"},
                 {Status::skipped, "skipped"});
#undef NBODY_ENUM_NAMES

template <class E>
concept NamedEnum = std::is_enum_v<E> && requires {
  EnumNames<E>::kNames;
};

template <NamedEnum E>
constexpr std::string_view to_string(E value) {
  for (const auto& [candidate, name] : EnumNames<E>::kNames) {
    if (candidate == value) return name;
  }
  return "unknown";
}

template <NamedEnum E>
std::optional<E> parse_enum(std::string_view text) {
  for (const auto& [candidate, name] : EnumNames<E>::kNames) {
    if (name == text) return candidate;
  }
  return std::nullopt;
}

// Every spelling of E, for messages: "cpu, gpu".
template <NamedEnum E>
std::string enum_spellings() {
  std::string list;
  for (const auto& [candidate, name] : EnumNames<E>::kNames) {
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  return list;
}

// JSON: the spelling; reading an unknown one is an error that names the expected ones.
template <NamedEnum E>
void to_json(nlohmann::json& j, E value) {
  j = to_string(value);
}

template <NamedEnum E>
void from_json(const nlohmann::json& j, E& value) {
  const std::string text = j.is_string() ? j.get<std::string>() : j.dump();
  const std::optional<E> parsed = parse_enum<E>(text);
  if (!parsed) {
    // nlohmann's own error, so that JSON_DIAGNOSTICS names the field's JSON pointer.
    throw nlohmann::json::type_error::create(
        302, "'" + text + "' is not one of " + enum_spellings<E>(), &j);
  }
  value = *parsed;
}

}  // namespace nbody
