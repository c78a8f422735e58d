// gpu_tree_bench: times the GPU Barnes-Hut core (nbody::gpu::tree::GpuTreeEvaluator) alone, per N
// and theta, with its phases apart (device seconds from CUDA events), its interactions per body,
// and its accuracy against the float64 reference on a sample of targets, as cpu/bench/tree_bench
// does for the CPU core.
//
//   gpu_tree_bench --ic plummer --sizes 64K,256K,1M --theta 0.3,0.5,0.7 --precision f32 --reps 5
//
// Every figure of a row is a median over the timed repetitions (the minimum too for the total);
// one evaluation before them warms the device (its buffers grow to the tree there) and gives the
// accelerations compared with the reference (every repetition computes the same ones).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "nbody/accuracy.hpp"
#include "nbody/bodies.hpp"
#include "nbody/errors.hpp"
#include "nbody/files.hpp"
#include "nbody/gpu/tree/gpu_tree.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/morton_keys.hpp"
#include "nbody/physics.hpp"
#include "nbody/reference.hpp"
#include "nbody/sizes.hpp"
#include "nbody/steady_clock.hpp"
#include "nbody/tree_bench_support.hpp"

namespace {

namespace tree = nbody::gpu::tree;

constexpr int kExitUsage = 2;

const std::map<std::string, tree::GpuKeySort> kKeySorts = {
    {"by-n", tree::GpuKeySort::by_n},
    {"rank", tree::GpuKeySort::rank},
    {"merge", tree::GpuKeySort::merge},
    {"radix", tree::GpuKeySort::radix},
    {"radix-by-halves", tree::GpuKeySort::radix_by_halves}};

const std::map<std::string, tree::GpuWalkOrder> kWalkOrders = {
    {"by-n", tree::GpuWalkOrder::by_n},
    {"targets", tree::GpuWalkOrder::targets},
    {"shallowest-first", tree::GpuWalkOrder::shallowest_first}};

// The options both tree benches take, and the device.
struct Options : nbody::TreeBenchOptions {
  int device = 0;
  int warps_per_walk = 0;           // 0: the evaluator's choice by N
  int moments_lanes = 0;            // 0: the evaluator's choice by N
  int targets_per_walk = 0;         // 0: the evaluator's choice by N
  std::string key_sort = "by-n";    // a name of kKeySorts
  std::string walk_order = "by-n";  // a name of kWalkOrders
  int shallow_group_levels = -1;    // -1: the evaluator's choice by N
  int shallow_group_targets = 16;
};

// One (N, theta): the medians over the timed repetitions.
struct Row {
  std::size_t n = 0;
  double theta = 0;
  double total_median = 0;  // every phase, device seconds
  double total_min = 0;
  double wall_median = 0;               // around the call, host clock
  tree::GpuTreeSeconds seconds_median;  // each phase's own median
  tree::GpuInteractionCounts interactions;
  tree::GpuTreeShape shape;
  std::optional<nbody::AccuracyMetrics> accuracy;  // absent with --check-bodies 0
};

std::optional<int> parse_options(int argc, char** argv, Options& options) {
  CLI::App app{"Times the GPU Barnes-Hut core per N and theta"};
  nbody::TreeBenchSpellings spellings;
  nbody::add_tree_bench_options(app, options, spellings);
  app.add_option("--device", options.device, "CUDA device ordinal");
  app.add_option("--warps-per-walk", options.warps_per_walk,
                 "warps walking each group together (1, 2, 4, 8 or 16; 0: chosen by N)")
      ->check(CLI::IsMember({0, 1, 2, 4, 8, 16}));
  app.add_option("--moments-lanes", options.moments_lanes,
                 "lanes computing each cell's moments together (1, 4 or 8; 0: chosen by N)")
      ->check(CLI::IsMember({0, 1, 4, 8}));
  app.add_option("--targets-per-walk", options.targets_per_walk,
                 "targets a walk takes at most (8, 16, 32 or 64; 0: chosen by N)")
      ->check(CLI::IsMember({0, 8, 16, 32, 64}));
  app.add_option("--key-sort", options.key_sort,
                 fmt::format("how the keys are sorted: rank (up to {} bodies), merge, radix, "
                             "radix-by-halves, or by-n (chosen by N)",
                             tree::kRankSortCapacity))
      ->check(CLI::IsMember(kKeySorts));
  app.add_option("--walk-order", options.walk_order,
                 "the order the walks are queued in: targets (their sorted order), "
                 "shallowest-first (the shallowest groups' walks first), or by-n (chosen by N)")
      ->check(CLI::IsMember(kWalkOrders));
  app.add_option("--shallow-group-levels", options.shallow_group_levels,
                 "where the walks go shallowest first, groups above this level are walked in "
                 "shorter runs (0: none; -1: chosen by N)")
      ->check(CLI::Range(-1, nbody::kDeepestLevel + 1));
  app.add_option("--shallow-group-targets", options.shallow_group_targets,
                 "targets a walk of such a group takes at most (8, 16, 32 or 64)")
      ->check(CLI::IsMember({8, 16, 32, 64}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "gpu_tree_bench: {}\n", e.what());
    return kExitUsage;
  }
  try {
    nbody::finish_tree_bench_options(spellings, options);
    const bool too_many = std::any_of(options.sizes.begin(), options.sizes.end(),
                                      [](std::size_t n) { return n > tree::kRankSortCapacity; });
    if (options.key_sort == "rank" && too_many) {
      throw nbody::UsageError(
          fmt::format("--key-sort: rank sorts at most {} bodies", tree::kRankSortCapacity));
    }
  } catch (const nbody::UsageError& e) {
    fmt::print(stderr, "gpu_tree_bench: {}\n", e.what());
    return kExitUsage;
  }
  return std::nullopt;
}

template <class T>
Row measure(tree::GpuTreeEvaluator<T>& evaluator, double theta,
            const nbody::ReferenceSample& sample, const Options& options) {
  Row row{.n = evaluator.size(), .theta = theta};
  const tree::GpuTreeResult warm_up = evaluator.evaluate(theta, options.softening);
  row.interactions = warm_up.interactions;
  row.shape = warm_up.shape;
  if (!sample.targets.empty()) {
    row.accuracy = nbody::compare_with_reference(evaluator.accelerations(), sample.accelerations,
                                                 sample.targets, sample.seen);
  }
  std::vector<double> total, wall, keys, sort, build, moments, traversal;
  for (int rep = 0; rep < options.reps; ++rep) {
    const nbody::SteadyClock::time_point start = nbody::SteadyClock::now();
    const tree::GpuTreeResult result = evaluator.evaluate(theta, options.softening);
    wall.push_back(nbody::seconds_since(start));
    total.push_back(result.seconds.total());
    keys.push_back(result.seconds.keys);
    sort.push_back(result.seconds.sort);
    build.push_back(result.seconds.build);
    moments.push_back(result.seconds.moments);
    traversal.push_back(result.seconds.traversal);
  }
  row.total_median = nbody::median(total);
  row.total_min = *std::min_element(total.begin(), total.end());
  row.wall_median = nbody::median(wall);
  row.seconds_median = {.keys = nbody::median(keys),
                        .sort = nbody::median(sort),
                        .build = nbody::median(build),
                        .moments = nbody::median(moments),
                        .traversal = nbody::median(traversal)};
  return row;
}

void print_header(const Options& options) {
  fmt::print(
      "# gpu_tree_bench: device {}, leaf capacity {}, group capacity {}, warps a walk {}, "
      "moments lanes a cell {}, targets a walk {}, key sort {}, walk order {}, shallow groups' "
      "levels {} ({} targets a walk)\n",
      options.device, options.leaf_capacity, options.group_capacity,
      options.warps_per_walk == 0 ? std::string("by N") : std::to_string(options.warps_per_walk),
      options.moments_lanes == 0 ? std::string("by N") : std::to_string(options.moments_lanes),
      options.targets_per_walk == 0 ? std::string("by N")
                                    : std::to_string(options.targets_per_walk),
      options.key_sort, options.walk_order,
      options.shallow_group_levels < 0 ? std::string("by N")
                                       : std::to_string(options.shallow_group_levels),
      options.shallow_group_targets);
  fmt::print("# ic {}, precision {}, seed {}, softening {}, reps {} (medians; after 1 warm-up)\n",
             nbody::to_string(options.ic), options.precision, options.seed, options.softening,
             options.reps);
  fmt::print("# float64 parts: {}\n", tree::kGpuTreeFloat64Parts);
  fmt::print("# accuracy: float64 reference on up to {} evenly spread targets (all N sources)\n",
             options.check_bodies);
  fmt::print(
      "{:>8} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} "
      "{:>9} {:>9} {:>8} {:>6}\n",
      "N", "theta", "total_s", "min_s", "wall_s", "keys_s", "sort_s", "cells_s", "moments_s",
      "walk_s", "int/body", "bb/body", "bc/body", "rel_L2", "max_rel", "cells", "depth");
}

void print_row(const Row& row) {
  const double n = static_cast<double>(row.n);
  const std::string l2 = row.accuracy ? fmt::format("{:.2e}", row.accuracy->relative_l2) : "-";
  const std::string max = row.accuracy ? fmt::format("{:.2e}", row.accuracy->max_relative) : "-";
  const tree::GpuTreeSeconds& s = row.seconds_median;
  fmt::print(
      "{:>8} {:>5.2f} {:>10.4e} {:>10.4e} {:>10.4e} {:>10.4e} {:>10.4e} {:>10.4e} {:>10.4e} "
      "{:>10.4e} {:>9.1f} {:>9.1f} {:>9.1f} {:>9} {:>9} {:>8} {:>6}\n",
      nbody::format_size(row.n), row.theta, row.total_median, row.total_min, row.wall_median,
      s.keys, s.sort, s.build, s.moments, s.traversal,
      static_cast<double>(row.interactions.total()) / n,
      static_cast<double>(row.interactions.body_body) / n,
      static_cast<double>(row.interactions.body_cell) / n, l2, max, row.shape.cells,
      row.shape.depth);
  std::fflush(stdout);
}

nlohmann::json row_to_json(const Row& row) {
  const tree::GpuTreeSeconds& s = row.seconds_median;
  nlohmann::json json = {
      {"n", row.n},
      {"theta", row.theta},
      {"total_seconds_median", row.total_median},
      {"total_seconds_min", row.total_min},
      {"wall_seconds_median", row.wall_median},
      {"phase_seconds_median",
       {{"keys", s.keys},
        {"sort", s.sort},
        {"build", s.build},
        {"moments", s.moments},
        {"traversal", s.traversal}}},
      {"interactions",
       {{"body_body", row.interactions.body_body}, {"body_cell", row.interactions.body_cell}}},
      {"shape",
       {{"cells", row.shape.cells},
        {"leaves", row.shape.leaves},
        {"groups", row.shape.groups},
        {"depth", row.shape.depth}}},
      {"accuracy", nullptr}};
  if (row.accuracy) {
    json["accuracy"] = {{"relative_l2", row.accuracy->relative_l2},
                        {"max_relative", row.accuracy->max_relative},
                        {"p99_relative", row.accuracy->p99_relative},
                        {"median_relative", row.accuracy->median_relative},
                        {"bodies_compared", row.accuracy->bodies_compared}};
  }
  return json;
}

template <class T>
std::vector<Row> run_all(const Options& options) {
  std::vector<Row> rows;
  for (const std::size_t n : options.sizes) {
    const nbody::Snapshot snapshot = nbody::make_initial_condition(options.ic, n, options.seed);
    const nbody::ReferenceSample sample =
        nbody::make_reference_sample<T>(snapshot.bodies, options.check_bodies, options.softening);
    tree::GpuTreeEvaluator<T> evaluator(n,
                                        {.leaf_capacity = options.leaf_capacity,
                                         .group_capacity = options.group_capacity,
                                         .gpu_device = options.device,
                                         .warps_per_walk = options.warps_per_walk,
                                         .moments_lanes = options.moments_lanes,
                                         .targets_per_walk = options.targets_per_walk,
                                         .key_sort = kKeySorts.at(options.key_sort),
                                         .walk_order = kWalkOrders.at(options.walk_order),
                                         .shallow_group_levels = options.shallow_group_levels,
                                         .shallow_group_targets = options.shallow_group_targets});
    evaluator.set_bodies(sample.seen);
    for (const double theta : options.thetas) {
      rows.push_back(measure<T>(evaluator, theta, sample, options));
      print_row(rows.back());
    }
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (const std::optional<int> exit_code = parse_options(argc, argv, options)) return *exit_code;
  if (const auto reason = tree::gpu_tree_unavailable_reason(options.device)) {
    fmt::print(stderr, "gpu_tree_bench: {}\n", *reason);
    return 1;
  }
  print_header(options);
  const std::vector<Row> rows =
      options.precision == "f64" ? run_all<double>(options) : run_all<float>(options);
  if (!options.json_path.empty()) {
    nlohmann::json json_rows = nlohmann::json::array();
    for (const Row& row : rows) json_rows.push_back(row_to_json(row));
    const nlohmann::json document = {{"settings",
                                      {{"ic", nbody::to_string(options.ic)},
                                       {"precision", options.precision},
                                       {"seed", options.seed},
                                       {"softening", options.softening},
                                       {"reps", options.reps},
                                       {"check_bodies", options.check_bodies},
                                       {"device", options.device},
                                       {"leaf_capacity", options.leaf_capacity},
                                       {"group_capacity", options.group_capacity},
                                       {"warps_per_walk", options.warps_per_walk},
                                       {"moments_lanes", options.moments_lanes},
                                       {"targets_per_walk", options.targets_per_walk},
                                       {"key_sort", options.key_sort},
                                       {"walk_order", options.walk_order},
                                       {"shallow_group_levels", options.shallow_group_levels},
                                       {"shallow_group_targets", options.shallow_group_targets}}},
                                     {"float64_parts", tree::kGpuTreeFloat64Parts},
                                     {"rows", json_rows}};
    try {
      nbody::write_file_atomically(options.json_path, document.dump(2) + "\n");
    } catch (const std::exception& e) {
      fmt::print(stderr, "gpu_tree_bench: --json: {}\n", e.what());
      return 1;
    }
  }
  return 0;
}
