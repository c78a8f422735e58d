#include "nbody/registry.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "nbody/errors.hpp"

namespace nbody {

std::optional<std::string> Implementation::cannot_run(std::size_t n,
                                                      const ExecutionOptions& options) const {
  std::optional<std::string> reason = unavailable_reason();
  if (!reason && size_limit_reason) reason = size_limit_reason(n, options);
  return reason;
}

double seconds_scaled_to(Algorithm algorithm, std::size_t n, std::size_t measured_n,
                         double measured_s) {
  const double ratio = static_cast<double>(n) / static_cast<double>(measured_n);
  if (algorithm == Algorithm::all_pairs) return measured_s * ratio * ratio;
  // N log N, the logarithm at least 1: below a few thousand bodies a tree is one group or few.
  const auto log_of = [](std::size_t count) {
    return std::max(1.0, std::log2(static_cast<double>(count)));
  };
  return measured_s * ratio * log_of(n) / log_of(measured_n);
}

std::string name_at_opening_angle(const std::string& name, double theta) {
  return fmt::format("{}[theta={}]", name, theta);
}

void Registry::add(Implementation implementation) {
  if (find(implementation.info.name) != nullptr) {
    throw std::logic_error("duplicate implementation name: " + implementation.info.name);
  }
  implementations_.push_back(std::move(implementation));
}

void Registry::replace(Implementation implementation) {
  const auto it = std::find_if(implementations_.begin(), implementations_.end(),
                               [&](const Implementation& existing) {
                                 return existing.info.name == implementation.info.name;
                               });
  if (it == implementations_.end()) {
    throw std::logic_error("no implementation to replace: " + implementation.info.name);
  }
  *it = std::move(implementation);
}

void Registry::bind_opening_angles(std::span<const double> thetas) {
  std::vector<Implementation> bound;
  for (Implementation& implementation : implementations_) {
    if (!implementation.at_opening_angle) {
      bound.push_back(std::move(implementation));
      continue;
    }
    for (const double theta : thetas) bound.push_back(implementation.at_opening_angle(theta));
  }
  implementations_ = std::move(bound);
}

void Registry::add_option_check(std::function<void(const ExecutionOptions&)> check) {
  option_checks_.push_back(std::move(check));
}

void Registry::check_options(const ExecutionOptions& options) const {
  for (const auto& check : option_checks_) check(options);
}

const Implementation* Registry::find(std::string_view name) const {
  for (const Implementation& impl : implementations_) {
    if (impl.info.name == name) return &impl;
  }
  return nullptr;
}

std::vector<const Implementation*> Registry::where(
    const std::function<bool(const ImplementationInfo&)>& predicate) const {
  std::vector<const Implementation*> matching;
  for (const Implementation& impl : implementations_) {
    if (predicate(impl.info)) matching.push_back(&impl);
  }
  return matching;
}

namespace {

// A tree formulation bound to an opening angle, "cpu.tree[theta=0.5]", is also found by its own
// name, "cpu.tree": the name `list` gives it, and --impl '^gpu\.tree$' would otherwise match
// none of its angles.
std::string_view formulation_name(const ImplementationInfo& info) {
  const std::string_view name = info.name;
  if (!info.theta) return name;
  return name.substr(0, name.find("[theta="));
}

}  // namespace

std::vector<const Implementation*> Registry::select(const std::string& pattern,
                                                    bool include_variants) const {
  std::regex regex;
  try {
    regex = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError(fmt::format("invalid --impl pattern '{}': {}", pattern, e.what()));
  }
  std::vector<const Implementation*> selected;
  const auto eligible = [include_variants](const ImplementationInfo& info) {
    return include_variants || info.role != Role::tuning_variant;
  };
  for (const Implementation& impl : implementations_) {
    const std::string_view own_name = formulation_name(impl.info);
    if (eligible(impl.info) && (std::regex_search(impl.info.name, regex) ||
                                std::regex_search(own_name.begin(), own_name.end(), regex))) {
      selected.push_back(&impl);
    }
  }
  if (selected.empty()) {
    std::string names;
    for (const Implementation& impl : implementations_) {
      if (eligible(impl.info)) names += (names.empty() ? "" : ", ") + impl.info.name;
    }
    throw UsageError(
        fmt::format("no implementation matches --impl '{}' (available: {})", pattern, names));
  }
  return selected;
}

}  // namespace nbody
