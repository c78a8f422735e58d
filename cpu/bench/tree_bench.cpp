// tree_bench: times the CPU Barnes-Hut core (nbody::cpu::tree::evaluate_tree) alone, per N and
// theta, with its build phases and traversal apart, its interactions per body, and its accuracy
// against the float64 reference on a sample of targets. It is for a GPU host's CPU before a
// cpu.tree formulation wraps the core in the suite's runner.
//
//   tree_bench --ic plummer --sizes 64K,256K,1M --theta 0.3,0.5,0.7 --precision f32 --reps 5
//
// Every figure of a row is a median over the timed repetitions (the minimum too for the total),
// all by one TreeEvaluator, as a run's repetitions are; one evaluation before them allocates its
// buffers, warms the caches and oneTBB's threads, and gives the accelerations compared with the
// reference (the walk is deterministic, so every repetition computes the same ones).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "nbody/accuracy.hpp"
#include "nbody/bodies.hpp"
#include "nbody/cpu/simd_runs.hpp"
#include "nbody/cpu/tree/octree.hpp"
#include "nbody/cpu/tree/precision.hpp"
#include "nbody/errors.hpp"
#include "nbody/files.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics.hpp"
#include "nbody/reference.hpp"
#include "nbody/sizes.hpp"
#include "nbody/steady_clock.hpp"
#include "nbody/tree_bench_support.hpp"

namespace {

namespace tree = nbody::cpu::tree;

constexpr int kExitUsage = 2;

// The options both tree benches take, and the CPU's threads and ISA.
struct Options : nbody::TreeBenchOptions {
  int threads = 0;  // 0: every thread oneTBB would use
  std::string isa;  // of the walk's interactions; empty: the widest this CPU has
};

// One (N, theta): the medians over the timed repetitions.
struct Row {
  std::size_t n = 0;
  double theta = 0;
  double total_median = 0;  // build + traversal, as the core times them
  double total_min = 0;
  double wall_median = 0;  // around the call: what the phases leave out
  double build_median = 0;
  tree::BuildSeconds build_parts_median;  // each part's own median
  double traversal_median = 0;
  double bodies_per_second = 0;  // N / total_median
  tree::InteractionCounts interactions;
  tree::TreeShape shape;
  std::optional<nbody::AccuracyMetrics> accuracy;  // absent with --check-bodies 0
};

// The options, or the exit code when the program should stop here (help, or bad input, whose
// message is printed on one line naming the option).
std::optional<int> parse_options(int argc, char** argv, Options& options) {
  CLI::App app{"Times the CPU Barnes-Hut core per N and theta"};
  nbody::TreeBenchSpellings spellings;
  nbody::add_tree_bench_options(app, options, spellings);
  app.add_option("--threads", options.threads, "oneTBB threads (0: all)");
  app.add_option("--isa", options.isa,
                 "ISA of the walk's interactions: sse4.2, avx2 or avx512f (default: the widest)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "tree_bench: {}\n", e.what());
    return kExitUsage;
  }
  try {
    nbody::finish_tree_bench_options(spellings, options);
    if (options.threads < 0) throw nbody::UsageError("--threads: 0 (all) or a positive count");
    nbody::cpu::simd::resolve_isa(options.isa);  // its message names --isa
  } catch (const nbody::UsageError& e) {
    fmt::print(stderr, "tree_bench: {}\n", e.what());
    return kExitUsage;
  }
  return std::nullopt;
}

template <class T>
Row measure(std::span<const nbody::Body<T>> bodies, double theta,
            const nbody::ReferenceSample& sample, const Options& options) {
  Row row{.n = bodies.size(), .theta = theta};
  const tree::TreeSettings settings{.leaf_capacity = options.leaf_capacity,
                                    .group_capacity = options.group_capacity,
                                    .isa = options.isa};
  tree::TreeEvaluator<T> evaluator(settings);
  {
    const tree::TreeForces<T>& warm_up = evaluator.evaluate(bodies, options.softening, theta);
    row.interactions = warm_up.interactions;
    row.shape = warm_up.shape;
    if (!sample.targets.empty()) {
      const std::vector<nbody::Vec3<double>> accelerations =
          nbody::promote(std::span<const nbody::Vec3<T>>(warm_up.accelerations));
      row.accuracy = nbody::compare_with_reference(accelerations, sample.accelerations,
                                                   sample.targets, sample.seen);
    }
  }
  std::vector<double> total, wall, build, keys, sort, cells, moments, traversal;
  for (int rep = 0; rep < options.reps; ++rep) {
    const nbody::SteadyClock::time_point start = nbody::SteadyClock::now();
    const tree::TreeForces<T>& forces = evaluator.evaluate(bodies, options.softening, theta);
    wall.push_back(nbody::seconds_since(start));
    const tree::TreeSeconds& seconds = forces.seconds;
    total.push_back(seconds.build.total() + seconds.traversal);
    build.push_back(seconds.build.total());
    keys.push_back(seconds.build.keys);
    sort.push_back(seconds.build.sort);
    cells.push_back(seconds.build.build);
    moments.push_back(seconds.build.moments);
    traversal.push_back(seconds.traversal);
  }
  row.total_median = nbody::median(total);
  row.total_min = *std::min_element(total.begin(), total.end());
  row.wall_median = nbody::median(wall);
  row.build_median = nbody::median(build);
  row.build_parts_median = {.keys = nbody::median(keys),
                            .sort = nbody::median(sort),
                            .build = nbody::median(cells),
                            .moments = nbody::median(moments)};
  row.traversal_median = nbody::median(traversal);
  row.bodies_per_second = static_cast<double>(row.n) / row.total_median;
  return row;
}

// The ISA of the walk's interactions, as the header and the JSON name it: "avx2 (AVX2+FMA, 8
// lanes)".
std::string walk_isa(const Options& options) {
  const nbody::cpu::simd::Isa isa = nbody::cpu::simd::resolve_isa(options.isa);
  const nbody::Precision precision =
      options.precision == "f64" ? nbody::Precision::f64 : nbody::Precision::f32;
  return fmt::format("{} ({})", nbody::cpu::simd::isa_name(isa),
                     nbody::cpu::simd::isa_description(isa, precision));
}

void print_header(const Options& options, int threads) {
  fmt::print("# tree_bench: logical CPUs {} (oneTBB may use {}), threads used {}\n",
             std::thread::hardware_concurrency(), tbb::info::default_concurrency(), threads);
  fmt::print("# ic {}, precision {}, seed {}, softening {}, reps {} (medians; after 1 warm-up)\n",
             nbody::to_string(options.ic), options.precision, options.seed, options.softening,
             options.reps);
  fmt::print("# float64 parts: {}\n", tree::kTreeFloat64Parts);
  fmt::print("# walk ISA: {}; leaf capacity {}, group capacity {}\n", walk_isa(options),
             options.leaf_capacity, options.group_capacity);
  if (options.check_bodies == 0) {
    fmt::print("# accuracy: not checked (--check-bodies 0)\n");
  } else {
    fmt::print("# accuracy: float64 reference on up to {} evenly spread targets (all N sources)\n",
               options.check_bodies);
  }
  fmt::print(
      "{:>8} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} "
      "{:>9} {:>9} {:>9} {:>9} {:>9}\n",
      "N", "theta", "total_s", "min_s", "wall_s", "build_s", "keys_s", "sort_s", "cells_s",
      "moments_s", "walk_s", "bodies/s", "int/body", "bb/body", "bc/body", "rel_L2", "max_rel");
}

void print_row(const Row& row) {
  const double n = static_cast<double>(row.n);
  const std::string l2 = row.accuracy ? fmt::format("{:.2e}", row.accuracy->relative_l2) : "-";
  const std::string max = row.accuracy ? fmt::format("{:.2e}", row.accuracy->max_relative) : "-";
  fmt::print(
      "{:>8} {:>5.2f} {:>10.4e} {:>10.4e} {:>10.4e} {:>10.4e} {:>10.4e} {:>10.4e} {:>10.4e} "
      "{:>10.4e} {:>10.4e} {:>10.4e} {:>9.1f} {:>9.1f} {:>9.1f} {:>9} {:>9}\n",
      nbody::format_size(row.n), row.theta, row.total_median, row.total_min, row.wall_median,
      row.build_median, row.build_parts_median.keys, row.build_parts_median.sort,
      row.build_parts_median.build, row.build_parts_median.moments, row.traversal_median,
      row.bodies_per_second, static_cast<double>(row.interactions.total()) / n,
      static_cast<double>(row.interactions.body_body) / n,
      static_cast<double>(row.interactions.body_cell) / n, l2, max);
  std::fflush(stdout);  // a long run shows each row as it is measured
}

nlohmann::json row_to_json(const Row& row) {
  const double n = static_cast<double>(row.n);
  nlohmann::json json = {
      {"n", row.n},
      {"theta", row.theta},
      {"total_seconds_median", row.total_median},
      {"total_seconds_min", row.total_min},
      {"wall_seconds_median", row.wall_median},
      {"build_seconds_median", row.build_median},
      {"build_parts_seconds_median",
       {{"keys", row.build_parts_median.keys},
        {"sort", row.build_parts_median.sort},
        {"build", row.build_parts_median.build},
        {"moments", row.build_parts_median.moments}}},
      {"traversal_seconds_median", row.traversal_median},
      {"bodies_per_second", row.bodies_per_second},
      {"interactions",
       {{"body_body", row.interactions.body_body}, {"body_cell", row.interactions.body_cell}}},
      {"interactions_per_body",
       {{"total", static_cast<double>(row.interactions.total()) / n},
        {"body_body", static_cast<double>(row.interactions.body_body) / n},
        {"body_cell", static_cast<double>(row.interactions.body_cell) / n}}},
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

nlohmann::json document_to_json(const Options& options, int threads, const std::vector<Row>& rows) {
  nlohmann::json json_rows = nlohmann::json::array();
  for (const Row& row : rows) json_rows.push_back(row_to_json(row));
  return {{"machine",
           {{"logical_cpus", std::thread::hardware_concurrency()},
            {"tbb_default_concurrency", tbb::info::default_concurrency()},
            {"threads", threads}}},
          {"settings",
           {{"ic", nbody::to_string(options.ic)},
            {"precision", options.precision},
            {"seed", options.seed},
            {"softening", options.softening},
            {"reps", options.reps},
            {"check_bodies", options.check_bodies},
            {"walk_isa", walk_isa(options)},
            {"leaf_capacity", options.leaf_capacity},
            {"group_capacity", options.group_capacity}}},
          {"float64_parts", tree::kTreeFloat64Parts},
          {"rows", json_rows}};
}

// Every (N, theta) in the order given, in precision T; prints each row as it is measured.
template <class T>
std::vector<Row> run_all(const Options& options) {
  std::vector<Row> rows;
  for (const std::size_t n : options.sizes) {
    const nbody::Snapshot snapshot = nbody::make_initial_condition(options.ic, n, options.seed);
    const nbody::ReferenceSample sample =
        nbody::make_reference_sample<T>(snapshot.bodies, options.check_bodies, options.softening);
    const std::vector<nbody::Body<T>> bodies = nbody::convert_precision<T, double>(sample.seen);
    for (const double theta : options.thetas) {
      rows.push_back(measure<T>(bodies, theta, sample, options));
      print_row(rows.back());
    }
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (const std::optional<int> exit_code = parse_options(argc, argv, options)) return *exit_code;

  const std::size_t thread_limit = options.threads > 0
                                       ? static_cast<std::size_t>(options.threads)
                                       : static_cast<std::size_t>(tbb::info::default_concurrency());
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, thread_limit);
  const int threads = static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));

  print_header(options, threads);
  const std::vector<Row> rows =
      options.precision == "f64" ? run_all<double>(options) : run_all<float>(options);
  if (!options.json_path.empty()) {
    try {
      nbody::write_file_atomically(options.json_path,
                                   document_to_json(options, threads, rows).dump(2) + "\n");
    } catch (const std::exception& e) {
      fmt::print(stderr, "tree_bench: --json: {}\n", e.what());
      return 1;
    }
  }
  return 0;
}
