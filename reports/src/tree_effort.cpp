#include "tree_effort.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace nbody::reports {
namespace {

// The bar the answer compares the algorithms at (EqualAccuracyAnswer), where a tree stands for its
// device.
constexpr double kStandingBar = EqualAccuracyAnswer::kRelativeL2;

bool timed(const TreeRow& t) {
  return t.status == Status::ok && t.median_s.has_value();
}

// The largest N at which every device with a timed tree of `precision` timed one; else the
// largest N at which any did. Empty where none did.
std::optional<std::size_t> compared_size(const std::vector<TreeRow>& trees, Precision precision) {
  std::vector<std::size_t> sizes[2];  // by device
  for (const TreeRow& t : trees) {
    if (timed(t) && t.precision == precision) sizes[t.device == DeviceKind::gpu].push_back(t.n);
  }
  if (sizes[0].empty() && sizes[1].empty()) return std::nullopt;
  std::optional<std::size_t> both;
  for (const std::size_t n : sizes[0]) {
    if (std::find(sizes[1].begin(), sizes[1].end(), n) != sizes[1].end()) {
      both = std::max(both.value_or(0), n);
    }
  }
  if (both) return both;
  std::size_t largest = 0;
  for (const auto& device : sizes) {
    for (const std::size_t n : device) largest = std::max(largest, n);
  }
  return largest;
}

// The tree that stands for `device` at N: the fastest meeting the answer's bar, else the fastest.
const TreeRow* standing_tree(const std::vector<TreeRow>& trees, DeviceKind device,
                             Precision precision, std::size_t n) {
  const TreeRow* fastest = nullptr;
  const TreeRow* fastest_meeting = nullptr;
  for (const TreeRow& t : trees) {
    if (!timed(t) || t.device != device || t.precision != precision || t.n != n) continue;
    if (fastest == nullptr || *t.median_s < *fastest->median_s) fastest = &t;
    const bool meets = t.relative_l2 && *t.relative_l2 <= kStandingBar;
    if (meets && (fastest_meeting == nullptr || *t.median_s < *fastest_meeting->median_s)) {
      fastest_meeting = &t;
    }
  }
  return fastest_meeting != nullptr ? fastest_meeting : fastest;
}

std::string percent(const std::optional<double>& fraction) {
  return fraction ? fmt::format("{:.0f}%", 100 * *fraction) : std::string("—");
}

// "cpu.tree[theta=0.5] at 55% (walk) and 25% (build) of its bounds", and where the walk has no
// fraction but the whole evaluation has, that one too.
std::string against_bounds(const TreeRow& t) {
  std::string text =
      fmt::format("{} at {} (walk) and {} (build) of its bounds", t.implementation,
                  percent(t.walk_fraction_of_bound), percent(t.build_fraction_of_bound));
  if (!t.walk_fraction_of_bound && t.fraction_of_bound) {
    text += fmt::format(", {} as a whole", percent(t.fraction_of_bound));
  }
  return text;
}

// Where the two sides' walks (or, without them, whole evaluations) stand more than kTreeEffortGap
// apart from their bounds: which is further, by how much, and what that does to the ratio.
std::string gap_sentence(const TreeRow& cpu, const TreeRow& gpu) {
  const bool walks = cpu.walk_fraction_of_bound && gpu.walk_fraction_of_bound;
  const std::optional<double> c = walks ? cpu.walk_fraction_of_bound : cpu.fraction_of_bound;
  const std::optional<double> g = walks ? gpu.walk_fraction_of_bound : gpu.fraction_of_bound;
  if (!c || !g || !(*c > 0) || !(*g > 0)) return {};
  const bool gpu_further = *g < *c;
  const double gap = gpu_further ? *c / *g : *g / *c;
  if (gap <= kTreeEffortGap) return {};
  return fmt::format(
      "the {}'s tree is {:.1f}× further from its {} bound than the {}'s (over {}×), so the ratio "
      "at equal accuracy may {} the GPU",
      gpu_further ? "GPU" : "CPU", gap, walks ? "walk's" : "whole evaluation's",
      gpu_further ? "CPU" : "GPU", kTreeEffortGap, gpu_further ? "understate" : "overstate");
}

// One precision's trees at their compared N and their gap; or, where a side's tree has no
// fraction to compare, that the rule cannot tell for trees, and why.
std::string precision_effort(const std::vector<TreeRow>& trees, Precision precision,
                             std::size_t n) {
  const TreeRow* cpu = standing_tree(trees, DeviceKind::cpu, precision, n);
  const TreeRow* gpu = standing_tree(trees, DeviceKind::gpu, precision, n);
  const std::string at = fmt::format("{} at N = {}", to_string(precision), n);
  for (const TreeRow* t : {cpu, gpu}) {
    if (t == nullptr || t->walk_fraction_of_bound || t->fraction_of_bound) continue;
    return fmt::format("{}: for trees it cannot tell: {} has no fraction of its walk's bound ({})",
                       at, t->implementation, t->walk_bound_missing);
  }
  std::vector<std::string> sides;
  for (const TreeRow* t : {cpu, gpu}) {
    if (t != nullptr) sides.push_back(against_bounds(*t));
  }
  std::string text = fmt::format("{}: {}", at, fmt::join(sides, " against "));
  if (cpu == nullptr || gpu == nullptr) {
    text += fmt::format(" (no {} tree timed there)", cpu == nullptr ? "CPU" : "GPU");
  } else if (const std::string gap = gap_sentence(*cpu, *gpu); !gap.empty()) {
    text += "; " + gap;
  }
  return text;
}

}  // namespace

std::string tree_effort(const AlgorithmComparison& algorithms) {
  std::vector<std::string> parts;
  for (const Precision precision : {Precision::f32, Precision::f64}) {
    if (const auto n = compared_size(algorithms.trees, precision)) {
      parts.push_back(precision_effort(algorithms.trees, precision, *n));
    }
  }
  if (parts.empty()) return {};
  return fmt::format("trees against their own bounds: {}", fmt::join(parts, "; "));
}

}  // namespace nbody::reports
