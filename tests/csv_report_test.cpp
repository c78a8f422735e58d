// results.csv: one row per result record (a simulate run's: per simulation), RFC 4180 quoting,
// empty cells for absent values, numbers that read back as the same doubles.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/reports/csv_report.hpp"
#include "nbody/results.hpp"
#include "simulation_document.hpp"
#include "tree_results.hpp"

namespace nbody::reports {
namespace {

// results.csv as report writes it.
std::string csv_of(const ResultsDocument& document) {
  return render_csv(document, analyze(document));
}

// Splits RFC 4180 text into rows of fields (quoted fields may hold commas, quotes, line breaks).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool in_quotes = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::string& field = rows.back().back();
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      rows.emplace_back(1);
    } else {
      field += c;
    }
  }
  if (rows.back().size() == 1 && rows.back().front().empty()) rows.pop_back();
  return rows;
}

ResultsDocument hand_made_document() {
  ResultsDocument doc;
  doc.implementations.push_back(ImplementationRecord(ImplementationInfo{.name = "cpu.soa",
                                                                        .device = DeviceKind::cpu,
                                                                        .precision = Precision::f32,
                                                                        .role = Role::optimized}));
  ResultRecord ok;
  ok.implementation = "cpu.soa";
  ok.initial_condition = "uniform";
  ok.n = 1024;
  ok.status = Status::ok;
  ok.accuracy =
      AccuracyRecord{.metrics = {.relative_l2 = 1.5e-7, .max_relative = 2e-6, .p99_relative = 1e-6},
                     .passed = true};
  ok.kernel = TimingStatistics{.repetitions = 5,
                               .samples_s = {1e-3, 1.1e-3, 0.9e-3, 1e-3, 1.05e-3},
                               .median_s = 1e-3,
                               .ci_low_s = 0.9e-3,
                               .ci_high_s = 1.1e-3,
                               .ci_confidence = 0.9375,
                               .cv = 0.07};
  ok.kernel->conditions = MeasurementConditions{
      .attempts = 3, .disturbances = {"other processes took 40% of the CPUs", "steal, 12%"}};
  ok.kernel_rate = RateFigures{.interactions_per_second = 1.048576e9,
                               .interactions_per_second_min = 9.5e8,
                               .interactions_per_second_max = 1.1e9,
                               .gflops_at_20 = 20.97152};
  ok.counters = CounterReadout{.source = "disassembly"};
  ok.counters->derived.gflops_counted = 18.5;
  ok.counters->derived.fraction_of_measured_peak = 0.25;
  doc.results.push_back(ok);

  ResultRecord skipped;
  skipped.implementation = "gpu.tuned";  // not among the implementations: empty properties
  skipped.initial_condition = "uniform";
  skipped.n = 2048;
  skipped.status = Status::skipped;
  skipped.reason = "no CUDA device, \"cudaGetDeviceCount\" says\nnone";
  doc.results.push_back(skipped);
  return doc;
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << name;
  return static_cast<std::size_t>(it - header.begin());
}

TEST(Csv, OneRowPerRecordWithTheColumnsPeoplePlot) {
  const std::string text = csv_of(hand_made_document());
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 3u) << text;
  const std::vector<std::string>& header = rows[0];
  EXPECT_EQ(header.size(), 49u);
  EXPECT_EQ(header.front(), "implementation");
  // The columns before version 9 keep their places; the trees' come next, then energy's, then
  // the trees' bounds.
  EXPECT_EQ(header[32], "disturbances");
  EXPECT_EQ(header[37], "build_s");
  EXPECT_EQ(header[38], "energy_j_per_evaluation");
  EXPECT_EQ(header[43], "energy_resolved");
  EXPECT_EQ(header[44], "walk_s");
  EXPECT_EQ(header.back(), "build_fraction_of_bound");
  for (const auto& row : rows) EXPECT_EQ(row.size(), header.size()) << text;
  const auto& ok = rows[1];
  EXPECT_EQ(ok[column(header, "communication_median_s")], "");  // one process: no all-gather
  EXPECT_EQ(ok[column(header, "implementation")], "cpu.soa");
  EXPECT_EQ(ok[column(header, "device")], "cpu");
  EXPECT_EQ(ok[column(header, "precision")], "f32");
  EXPECT_EQ(ok[column(header, "role")], "optimized");
  EXPECT_EQ(ok[column(header, "n")], "1024");
  EXPECT_EQ(ok[column(header, "status")], "ok");
  EXPECT_EQ(ok[column(header, "reason")], "");
  EXPECT_EQ(ok[column(header, "median_s")], "0.001");
  EXPECT_EQ(ok[column(header, "ci_confidence")], "0.9375");
  EXPECT_EQ(ok[column(header, "repetitions")], "5");
  EXPECT_EQ(ok[column(header, "interactions_per_second")], "1048576000");
  EXPECT_EQ(ok[column(header, "relative_l2")], "1.5e-07");
  EXPECT_EQ(ok[column(header, "accuracy_passed")], "true");
  EXPECT_EQ(ok[column(header, "gflops_counted")], "18.5");
  EXPECT_EQ(ok[column(header, "fraction_of_measured_peak")], "0.25");
  EXPECT_EQ(ok[column(header, "fraction_of_instruction_bound")], "");  // not derived
  EXPECT_EQ(ok[column(header, "end_to_end_median_s")], "");            // CPU: no copies
  EXPECT_EQ(ok[column(header, "disturbed")], "true");
  EXPECT_EQ(ok[column(header, "disturbances")], "other processes took 40% of the CPUs; steal, 12%");
  // No energy read (a file older than version 10), and no tree: every later cell is empty, none
  // a zero.
  for (std::size_t i = column(header, "energy_j_per_evaluation"); i < header.size(); ++i) {
    EXPECT_EQ(ok[i], "") << header[i];
  }
}

// A tree's walk and build against their own bounds (version 11), as the analysis finds them; an
// all-pairs row, or a tree without a cost model, has empty cells there.
TEST(Csv, TreeRowHasItsWalkAndBuildAgainstTheirBounds) {
  ResultsDocument doc = testing::all_pairs_and_trees();
  testing::add_tree_bounds(doc);
  const auto rows = parse_csv(csv_of(doc));
  const std::vector<std::string>& header = rows[0];
  const auto row_of = [&rows](const std::string& name, const std::string& n) {
    return *std::find_if(rows.begin(), rows.end(),
                         [&](const auto& row) { return row[0] == name && row[6] == n; });
  };
  // cpu.tree[theta=0.5] at 1024: 0.1 ms, its build 20 µs; 200 units a body at 2e9 a second,
  // 100 bytes a body at 1e10 bytes a second.
  const std::vector<std::string> tree = row_of("cpu.tree[theta=0.5]", "1024");
  const auto value = [&](const char* name) { return std::stod(tree[column(header, name)]); };
  EXPECT_DOUBLE_EQ(value("walk_s"), 8e-5);
  EXPECT_DOUBLE_EQ(value("walk_bound_s"), 200.0 * 1024 / 2e9);
  EXPECT_DOUBLE_EQ(value("walk_fraction_of_bound"), 200.0 * 1024 / 2e9 / 8e-5);
  EXPECT_DOUBLE_EQ(value("build_bound_s"), 100.0 * 1024 / 1e10);
  EXPECT_DOUBLE_EQ(value("build_fraction_of_bound"), 100.0 * 1024 / 1e10 / 2e-5);
  const std::vector<std::string> all_pairs = row_of("cpu.tbb", "1024");
  for (std::size_t i = column(header, "walk_s"); i < header.size(); ++i) {
    EXPECT_EQ(all_pairs[i], "") << header[i];
  }
  const auto old = parse_csv(csv_of(testing::all_pairs_and_trees()));
  const auto old_tree = std::find_if(
      old.begin(), old.end(), [](const auto& row) { return row[0] == "gpu.tree[theta=0.5]"; });
  ASSERT_NE(old_tree, old.end());
  EXPECT_NE((*old_tree)[column(header, "walk_s")], "");                  // its time is known
  EXPECT_EQ((*old_tree)[column(header, "walk_fraction_of_bound")], "");  // its bound is not
}

// A tree's row: its algorithm and angle, the interactions it evaluated, its build; no rate.
TEST(Csv, TreeRowHasItsAlgorithmThetaWorkAndBuild) {
  const ResultsDocument doc = testing::all_pairs_and_trees();
  const auto rows = parse_csv(csv_of(doc));
  const std::vector<std::string>& header = rows[0];
  const auto tree = std::find_if(rows.begin(), rows.end(), [](const auto& row) {
    return row[0] == "cpu.tree[theta=0.5]" && row[6] == "1024";
  });
  ASSERT_NE(tree, rows.end());
  EXPECT_EQ((*tree)[column(header, "algorithm")], "barnes_hut");
  EXPECT_EQ((*tree)[column(header, "theta")], "0.5");
  EXPECT_EQ((*tree)[column(header, "body_body")], "102400");
  EXPECT_EQ((*tree)[column(header, "body_cell")], "51200");
  EXPECT_EQ((*tree)[column(header, "build_s")], "2e-05");
  EXPECT_EQ((*tree)[column(header, "median_s")], "0.0001");
  EXPECT_EQ((*tree)[column(header, "interactions_per_second")], "");
  const auto all_pairs =
      std::find_if(rows.begin(), rows.end(), [](const auto& row) { return row[0] == "cpu.tbb"; });
  ASSERT_NE(all_pairs, rows.end());
  EXPECT_EQ((*all_pairs)[column(header, "algorithm")], "all_pairs");
  EXPECT_EQ((*all_pairs)[column(header, "theta")], "");
  EXPECT_EQ((*all_pairs)[column(header, "build_s")], "");
}

TEST(Csv, QuotesCommasQuotesAndLineBreaks) {
  const std::string text = csv_of(hand_made_document());
  EXPECT_NE(text.find("\"other processes took 40% of the CPUs; steal, 12%\""), std::string::npos);
  EXPECT_NE(text.find("\"no CUDA device, \"\"cudaGetDeviceCount\"\" says\nnone\""),
            std::string::npos)
      << text;
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2][column(rows[0], "reason")],
            "no CUDA device, \"cudaGetDeviceCount\" says\nnone");
}

// A skipped record has no timing, accuracy or counters: every one of those cells is empty.
TEST(Csv, SkippedRowHasEmptyCellsWhereNothingWasMeasured) {
  const auto rows = parse_csv(csv_of(hand_made_document()));
  ASSERT_EQ(rows.size(), 3u);
  const auto& header = rows[0];
  const auto& skipped = rows[2];
  EXPECT_EQ(skipped[column(header, "status")], "skipped");
  EXPECT_EQ(skipped[column(header, "n")], "2048");
  for (const char* name : {"device", "precision", "accuracy_class", "role"}) {
    EXPECT_EQ(skipped[column(header, name)], "") << name;
  }
  for (std::size_t i = column(header, "median_s"); i < header.size(); ++i) {
    EXPECT_EQ(skipped[i], "") << header[i];
  }
}

TEST(Csv, EmptyDocumentIsTheHeaderAlone) {
  const std::string text = csv_of(ResultsDocument{});
  EXPECT_EQ(parse_csv(text).size(), 1u);
  EXPECT_TRUE(text.ends_with("build_fraction_of_bound\r\n"));
}

TEST(Csv, SimulateRunHasOneRowPerSimulationWithItsOwnHeader) {
  const ResultsDocument doc = testing::simulation_document();
  const std::string text = csv_of(doc);
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 1 + doc.simulations.size()) << text;
  const std::vector<std::string>& header = rows[0];
  EXPECT_EQ(header.size(), 30u);
  EXPECT_EQ(header.front(), "implementation");
  EXPECT_EQ(header[25], "divergence_velocity");
  EXPECT_EQ(header[28], "tree_build_s");
  EXPECT_EQ(header.back(), "joules_per_step");
  EXPECT_EQ(std::find(header.begin(), header.end(), "median_s"), header.end());  // a run's
  for (const auto& row : rows) EXPECT_EQ(row.size(), header.size()) << text;

  // Every number reads back as the double results.json has.
  for (std::size_t i = 0; i < doc.simulations.size(); ++i) {
    const SimulationRecord& s = doc.simulations[i];
    const auto& row = rows[i + 1];
    SCOPED_TRACE(s.implementation + " " + std::to_string(s.n));
    const auto cell = [&](const char* name) { return row[column(header, name)]; };
    EXPECT_EQ(cell("implementation"), s.implementation);
    EXPECT_EQ(cell("n"), std::to_string(s.n));
    EXPECT_EQ(cell("status"), to_string(s.status));
    EXPECT_EQ(cell("initial_condition"), "plummer");
    EXPECT_EQ(cell("threads"), std::to_string(s.threads));
    EXPECT_EQ(std::stod(cell("dt")), s.dt);
    if (s.status == Status::skipped) continue;
    EXPECT_EQ(cell("steps"), std::to_string(s.steps));
    EXPECT_EQ(std::stod(cell("wall_seconds")), s.wall_seconds);
    EXPECT_EQ(std::stod(cell("steps_per_second")), s.steps_per_second);
    EXPECT_EQ(std::stod(cell("step_s")), s.per_step.step_s);
    EXPECT_EQ(std::stod(cell("force_s")), s.per_step.force_s);
    EXPECT_EQ(std::stod(cell("integration_s")), s.per_step.integration_s);
    EXPECT_EQ(std::stod(cell("other_s")), s.per_step.other_s);
    EXPECT_EQ(std::stod(cell("communication_s")), s.per_step.communication_s);
    EXPECT_EQ(std::stod(cell("diagnostics_s")), s.per_step.diagnostics_s);
    EXPECT_EQ(std::stod(cell("snapshots_s")), s.per_step.snapshots_s);
    EXPECT_EQ(std::stod(cell("max_relative_energy_error")), s.max_relative_energy_error);
    EXPECT_EQ(std::stod(cell("final_relative_energy_error")),
              s.conservation.back().relative_energy_error);
    if (s.divergence) {
      EXPECT_EQ(cell("divergence_steps"), "100");
      EXPECT_EQ(std::stod(cell("divergence_position")), s.divergence->position);
      EXPECT_EQ(std::stod(cell("divergence_velocity")), s.divergence->velocity);
    } else {
      EXPECT_EQ(cell("divergence_position"), "");
    }
    EXPECT_EQ(cell("joules_per_step"), "");  // no energy read
  }
  const auto& cpu = rows[1];
  EXPECT_EQ(cpu[column(header, "device")], "cpu");
  EXPECT_EQ(cpu[column(header, "role")], "optimized");
  EXPECT_EQ(cpu[column(header, "force_s")], "0.0009000000000000555");  // the shortest exact text
  EXPECT_EQ(rows[3][column(header, "other_s")], "-1e-06");             // signed, as measured
}

// A skipped simulation ran no step: its zeros in results.json are no figures.
TEST(Csv, SkippedSimulationHasEmptyFigures) {
  const auto rows = parse_csv(csv_of(testing::simulation_document()));
  const auto& header = rows[0];
  const auto& skipped = rows[2];
  EXPECT_EQ(skipped[column(header, "status")], "skipped");
  EXPECT_EQ(skipped[column(header, "reason")],
            "128 steps predicted to take 14 s, over the --max-seconds budget of 8 s");
  for (std::size_t i = column(header, "steps"); i < header.size(); ++i) {
    // A setting and the implementation's algorithm and angle, known before any step.
    if (header[i] == "dt" || header[i] == "algorithm" || header[i] == "theta") continue;
    EXPECT_EQ(skipped[i], "") << header[i];
  }
}

TEST(Csv, SimulateRunWithoutSimulationsIsItsHeaderAlone) {
  ResultsDocument doc;
  doc.settings.command = "simulate";
  const std::string text = csv_of(doc);
  EXPECT_EQ(parse_csv(text).size(), 1u);
  EXPECT_TRUE(text.ends_with("joules_per_step\r\n"));
}

}  // namespace
}  // namespace nbody::reports
