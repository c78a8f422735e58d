// The results document: its JSON round trip, the versions it still reads, the impossible values
// it refuses by name, and how the report states its settings.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nbody/errors.hpp"
#include "nbody/reports/analysis.hpp"
#include "nbody/reports/markdown_report.hpp"
#include "nbody/results.hpp"
#include "nbody/results_validation.hpp"
#include "nbody/sizes.hpp"
#include "plausible_results.hpp"
#include "scratch_folder.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using testing::plausible_results;
using testing::scratch;

TEST(Sizes, ParseListsAndSuffixes) {
  EXPECT_EQ(parse_sizes("1000,4096"), (std::vector<std::size_t>{1000, 4096}));
  EXPECT_EQ(parse_sizes("1K,64K,1M"), (std::vector<std::size_t>{1024, 65536, 1048576}));
  EXPECT_EQ(parse_sizes(std::vector<std::string>{"7", "31"}), (std::vector<std::size_t>{7, 31}));
  for (const char* bad : {"0", "-5", "abc", "1.5", "", "12x", "99999999999999999999", "3000M",
                          "8,,16", "8,", ",8", "8,8", "1K,1024"}) {
    EXPECT_THROW(parse_sizes(std::string(bad)), UsageError) << bad;
  }
  EXPECT_THROW(parse_sizes(std::vector<std::string>{"7", "7"}), UsageError);
  EXPECT_EQ(format_size(65536), "64K");
  EXPECT_EQ(format_size(1000), "1000");
}

TEST(Results, JsonRoundTripPreservesEverything) {
  ResultsDocument doc;
  doc.generated_at = "2026-11-21T00:00:00Z";
  doc.command_line = {"nbody-fair", "run"};
  doc.complete = true;
  doc.machine.cpu_model = "Test CPU";
  doc.machine.isa_features = {"avx2"};
  doc.build.libraries = {{"fmt", "9.1.0"}};
  doc.settings.sizes = {7, 31};
  doc.ceilings = Ceilings{.entries = {{.name = "cpu.fp32_flops.avx2.one_core", .value = 1.5e9}}};
  doc.implementations.push_back(ImplementationRecord(
      ImplementationInfo{.name = "cpu.soa", .optimizations = {"structure of arrays"}}));
  doc.inputs.push_back({"uniform", 31, 5, "abc", "def"});
  ResultRecord r;
  r.implementation = "cpu.soa";
  r.n = 31;
  r.status = Status::ok;
  r.details = {{"isa", "avx2"}};
  r.accuracy =
      AccuracyRecord{.metrics = {.relative_l2 = 1e-7, .bodies_compared = 31}, .passed = true};
  r.kernel = TimingStatistics{.repetitions = 3, .samples_s = {1, 2, 3}, .median_s = 2};
  r.kernel_rate = RateFigures{.interactions_per_second = 480.5};
  r.counters = CounterReadout{.source = "test", .derived = {.gflops_counted = 2.5}};
  doc.results.push_back(r);
  ResultRecord skipped;
  skipped.n = 31;
  skipped.status = Status::skipped;
  skipped.reason = "no GPU";
  doc.results.push_back(skipped);

  const fs::path dir = scratch("roundtrip");
  save_results(doc, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_EQ(nlohmann::json(loaded), nlohmann::json(doc));
  EXPECT_FALSE(loaded.results[1].kernel.has_value());
  EXPECT_EQ(loaded.results[0].kernel->samples_s.size(), 3u);
  fs::remove_all(dir);
}

// A failed kernel's NaN or infinite errors are written as null and read back as NaN.
TEST(Results, NonFiniteErrorsSurviveTheRoundTrip) {
  ResultsDocument doc;
  ResultRecord r;
  r.n = 7;
  r.status = Status::failed;
  r.accuracy = AccuracyRecord{.metrics = {.relative_l2 = std::numeric_limits<double>::infinity(),
                                          .max_relative = std::nan("")}};
  doc.results.push_back(r);
  const fs::path dir = scratch("nonfinite");
  save_results(doc, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_TRUE(std::isnan(loaded.results[0].accuracy->metrics.relative_l2));
  EXPECT_TRUE(std::isnan(loaded.results[0].accuracy->metrics.max_relative));
  EXPECT_EQ(loaded.results[0].accuracy->metrics.p99_relative, 0.0);
  fs::remove_all(dir);
}

// Version 1 files (before roles and typed records) still load: a real one, from the GPU host.
TEST(Results, ReadsVersionOneFiles) {
  const fs::path v1 = fs::path(NBODY_SOURCE_DIR) / "tests/data/results-schema-1-h200.json";
  ASSERT_EQ(nlohmann::json::parse(std::ifstream(v1)).value("schema_version", 0), 1);
  const ResultsDocument doc = load_results(v1);
  EXPECT_EQ(doc.schema_version, kResultsSchemaVersion);
  ASSERT_FALSE(doc.implementations.empty());
  for (const ImplementationRecord& impl : doc.implementations) {
    const bool naive = impl.name == "cpu.aos" || impl.name == "gpu.aos";
    EXPECT_EQ(impl.role, naive ? Role::naive_baseline : Role::optimized) << impl.name;
    EXPECT_EQ(impl.device, impl.name.starts_with("gpu") ? DeviceKind::gpu : DeviceKind::cpu);
  }
  ASSERT_TRUE(doc.ceilings.has_value());
  EXPECT_TRUE(doc.ceilings->value(kGpuInteractionMixCeiling).has_value() ||
              doc.ceilings->value(kGpuFp32FlopsCeiling).has_value());
  ASSERT_FALSE(doc.machine.gpus.empty());
  EXPECT_GT(doc.machine.gpus.front().sm_count, 0);
  std::size_t counted = 0;
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::ok && r.counters && r.counters->available()) {
      EXPECT_TRUE(r.counters->derived.interactions_credited.has_value()) << r.implementation;
      ++counted;
    }
  }
  EXPECT_GT(counted, 0u);
  // Saved again, it is a version 2 file that reads back the same.
  const fs::path dir = scratch("v1");
  save_results(doc, dir / "results.json");
  EXPECT_EQ(nlohmann::json(load_results(dir / "results.json")), nlohmann::json(doc));
  fs::remove_all(dir);
}

// An enum spelling the schema does not have is refused, naming the spellings it has.
TEST(Results, UnknownSpellingsAreRefused) {
  ResultsDocument doc;
  doc.implementations.push_back(ImplementationRecord(ImplementationInfo{.name = "cpu.soa"}));
  nlohmann::json j = doc;
  j["implementations"][0]["device"] = "fpga";
  const fs::path dir = scratch("spelling");
  std::ofstream(dir / "results.json") << j.dump();
  try {
    load_results(dir / "results.json");
    ADD_FAILURE() << "an unknown device was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "implementations[0].device is 'fpga'; it must be one of cpu, gpu"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// What load_results says about `j`, or "" when it loads.
std::string load_error(const nlohmann::json& j) {
  const fs::path dir = scratch("impossible");
  std::ofstream(dir / "results.json") << j.dump();
  std::string message;
  try {
    load_results(dir / "results.json");
  } catch (const UsageError& e) {
    message = e.what();
  }
  fs::remove_all(dir);
  return message;
}

// Values no measurement could produce are refused, naming the field; so are type errors (the
// schema's). A failed kernel's NaN errors stay valid (above).
// A simulate results file (the H100 sample) loads; an impossible figure in it is refused by name.
TEST(Results, ImpossibleSimulationValuesAreRefusedNamingTheField) {
  std::ifstream in(fs::path(NBODY_SOURCE_DIR) / "docs/samples/simulation/results.json");
  const nlohmann::json sample = nlohmann::json::parse(in);
  EXPECT_EQ(load_error(sample), "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/simulations/2/steps_per_second",
       "simulations[2].steps_per_second is -5; it must not be negative"},
      {"/simulations/0/per_step/force_s",
       "simulations[0].per_step.force_s is -5; it must not be negative"},
      {"/simulations/1/n", "simulations[1].n is 0; it must be positive"},
      {"/settings/dt", "settings.dt is -5; it must not be negative"},
  };
  for (const auto& [pointer, message] : cases) {
    nlohmann::json j = sample;
    j[nlohmann::json::json_pointer(pointer)] = message.find(" is 0;") != std::string::npos ? 0 : -5;
    EXPECT_NE(load_error(j).find(message), std::string::npos) << pointer << ": " << load_error(j);
  }
}

TEST(Results, ImpossibleValuesAreRefusedNamingTheField) {
  EXPECT_EQ(load_error(plausible_results()), "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/results/3/kernel_rate/interactions_per_second",
       "results[3].kernel_rate.interactions_per_second is -5; it must be positive"},
      {"/results/0/n", "results[0].n is 0; it must be positive"},
      {"/results/1/kernel/median_s", "results[1].kernel.median_s is -5; it must be positive"},
      {"/results/2/kernel/samples_s/1",
       "results[2].kernel.samples_s[1] is -5; it must be positive"},
      {"/results/2/kernel/repetitions",
       "results[2].kernel.repetitions is -5; it must not be negative"},
      {"/settings/sizes/1", "settings.sizes[1] is 0; it must be positive"},
      {"/settings/repetitions", "settings.repetitions is -5; it must not be negative"},
  };
  for (const auto& [pointer, message] : cases) {
    nlohmann::json j = plausible_results();
    j[nlohmann::json::json_pointer(pointer)] = message.find(" is 0;") != std::string::npos ? 0 : -5;
    EXPECT_NE(load_error(j).find(message), std::string::npos) << load_error(j);
  }
  // JSON has no infinity (nlohmann refuses 1e999 as an overflow): the check itself, in memory.
  ResultsDocument infinite = plausible_results().get<ResultsDocument>();
  infinite.results[1].kernel->mean_s = std::numeric_limits<double>::infinity();
  try {
    check_results_values(infinite);
    ADD_FAILURE() << "an infinite time was accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "results[1].kernel.mean_s is inf; it must be finite");
  }
  nlohmann::json wrong_type = plausible_results();
  wrong_type["results"][2]["n"] = "many";
  EXPECT_NE(load_error(wrong_type).find("results[2].n is 'many'; it must be a whole number"),
            std::string::npos)
      << load_error(wrong_type);
}

// Values that parse but cannot be: a negative count (which an unsigned field would wrap to near
// 2^64), extremes on the wrong side of the median, repetitions without their samples; and a
// document that is JSON but no object. Each is UsageError naming the field (exit 2), never the
// JSON library's own words. (tests/data/results-schema-cases.json has every kind of refusal.)
TEST(Results, InconsistentOrNegativeFiguresAndNonObjectsAreRefused) {
  struct Case {
    std::string pointer;
    nlohmann::json value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/results/0/n", -5, "results[0].n is -5; it must be positive"},
      {"/inputs/0/seed", -1, "inputs[0].seed is -1; it must not be negative"},
      {"/settings/sizes/0", -64, "settings.sizes[0] is -64; it must be positive"},
      {"/results/2/kernel/min_s", 1.0, "results[2].kernel.min_s is 1; it must not exceed "},
      {"/results/2/kernel/max_s", 1e-12, "results[2].kernel.median_s is "},
      {"/results/2/kernel/samples_s", nlohmann::json::array(),
       "results[2].kernel.samples_s is 0 long; it must have one per repetition"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = plausible_results();
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    EXPECT_NE(load_error(j).find(c.message), std::string::npos)
        << c.pointer << ": " << load_error(j);
  }
  for (const nlohmann::json& not_an_object :
       {nlohmann::json::array({1, 2}), nlohmann::json("x"), nlohmann::json(3)}) {
    EXPECT_NE(
        load_error(not_an_object).find("is not an nbody-fair results file (not a JSON object)"),
        std::string::npos)
        << not_an_object.dump();
  }
}

// Version 5's decomposition over ranks: older files read as one process; impossible values (no
// rank, a host list that does not match the ranks, an unknown scheme, a negative all-gather) are
// refused by name.
TEST(Results, DecompositionOverRanksIsReadAndChecked) {
  nlohmann::json old = plausible_results();
  old["settings"].erase("ranks");
  old["settings"].erase("decomposition");
  old["settings"].erase("rank_hosts");
  EXPECT_EQ(load_error(old), "");
  nlohmann::json decomposed = plausible_results();
  decomposed["settings"]["ranks"] = 2;
  decomposed["settings"]["decomposition"] = "target_range";
  decomposed["settings"]["rank_hosts"] = {"a", "b"};
  decomposed["results"][1]["communication"] = decomposed["results"][1]["kernel"];
  EXPECT_EQ(load_error(decomposed), "");
  const std::vector<std::pair<std::pair<std::string, nlohmann::json>, std::string>> cases = {
      {{"/settings/ranks", 0}, "settings.ranks is 0; it must be positive"},
      {{"/settings/rank_hosts", nlohmann::json::array({"a", "b", "c"})},
       "settings.rank_hosts is 3 long; it must have one per rank"},
      {{"/settings/decomposition", "rows"},
       "settings.decomposition is 'rows'; it must be one of none, target_range"},
      {{"/results/1/communication/median_s", -5},
       "results[1].communication.median_s is -5; it must be positive"},
  };
  for (const auto& [change, message] : cases) {
    nlohmann::json j = decomposed;
    j[nlohmann::json::json_pointer(change.first)] = change.second;
    EXPECT_NE(load_error(j).find(message), std::string::npos) << load_error(j);
  }
}

// Version 6's GPUs per rank: a round trip keeps them; a real version 5 file (no such field) reads
// as version 6 with none, i.e. the one device of gpu_device; a GPU named twice or a negative
// ordinal is refused by name.
TEST(Results, GpuDevicesRoundTripAndVersionFiveFilesRead) {
  ResultsDocument doc = plausible_results().get<ResultsDocument>();
  doc.settings.gpu_devices = {0, 3};
  const fs::path dir = scratch("gpu-devices");
  save_results(doc, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_EQ(loaded.schema_version, kResultsSchemaVersion);
  EXPECT_EQ(loaded.settings.gpu_devices, (std::vector<int>{0, 3}));
  EXPECT_EQ(nlohmann::json(loaded), nlohmann::json(doc));
  fs::remove_all(dir);

  const fs::path v5 = fs::path(NBODY_SOURCE_DIR) / "docs/samples/simulation/results.json";
  const nlohmann::json v5_json = nlohmann::json::parse(std::ifstream(v5));
  ASSERT_EQ(v5_json.value("schema_version", 0), 5);
  ASSERT_FALSE(v5_json["settings"].contains("gpu_devices"));
  const ResultsDocument old = load_results(v5);
  EXPECT_EQ(old.schema_version, kResultsSchemaVersion);
  EXPECT_TRUE(old.settings.gpu_devices.empty());
  EXPECT_EQ(old.settings.ranks, 1);
  EXPECT_EQ(old.results.size(), v5_json["results"].size());

  nlohmann::json twice = nlohmann::json(doc);
  twice["settings"]["gpu_devices"] = {1, 2, 1};
  EXPECT_NE(load_error(twice).find("settings.gpu_devices[2] is 1 again; each GPU is named once"),
            std::string::npos)
      << load_error(twice);
  nlohmann::json negative = nlohmann::json(doc);
  negative["settings"]["gpu_devices"] = {-1};
  EXPECT_NE(load_error(negative).find("settings.gpu_devices[0] is -1; it must not be negative"),
            std::string::npos)
      << load_error(negative);
}

// Version 11's cost models of the trees: a round trip keeps them; a version 9 file of trees (none
// recorded) reads with none, and its reports give its trees no fraction of bound, saying why.
TEST(Results, TreeCostsRoundTripAndVersionNineTreesRead) {
  const fs::path v9 =
      fs::path(NBODY_SOURCE_DIR) / "tests/data/results-schema-9-trees-hand-made.json";
  ASSERT_EQ(nlohmann::json::parse(std::ifstream(v9)).value("schema_version", 0), 9);
  ResultsDocument old = load_results(v9);
  std::size_t trees = 0;
  for (const ResultRecord& r : old.results) {
    if (!r.tree_work) continue;
    ++trees;
    EXPECT_FALSE(r.tree_work->costs) << r.implementation;
  }
  ASSERT_GT(trees, 0u);
  const reports::Analysis a = reports::analyze(old);
  ASSERT_FALSE(a.algorithms.trees.empty());
  for (const reports::TreeRow& t : a.algorithms.trees) {
    if (t.status != Status::ok) continue;
    EXPECT_FALSE(t.walk_fraction_of_bound) << t.implementation;
    EXPECT_EQ(t.walk_bound_missing, "results older than schema version 11 record no cost model");
  }

  const auto tree = std::find_if(old.results.begin(), old.results.end(),
                                 [](const ResultRecord& r) { return r.tree_work.has_value(); });
  tree->tree_work->costs = TreeCostModel{.walk_ceiling = "gpu.fp64_flops.fma",
                                         .walk_figure = CeilingFigure::value,
                                         .walk_scale = 0.5,
                                         .body_body_cost = 16,
                                         .body_cell_cost = 40,
                                         .cost_unit = "FP64 instructions",
                                         .cost_basis = "SASS",
                                         .build_ceiling = "gpu.memory_bandwidth.d2d_copy",
                                         .build_bytes = 4.5e8,
                                         .build_basis = "a model"};
  const fs::path dir = scratch("tree-costs");
  save_results(old, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_EQ(nlohmann::json(loaded), nlohmann::json(old));
  const auto read = std::find_if(loaded.results.begin(), loaded.results.end(),
                                 [](const ResultRecord& r) { return r.tree_work.has_value(); });
  ASSERT_TRUE(read->tree_work->costs);
  EXPECT_EQ(read->tree_work->costs->walk_figure, CeilingFigure::value);
  EXPECT_EQ(read->tree_work->costs->body_cell_cost, 40);
  fs::remove_all(dir);
}

// Version 7's exchange between ranks: a round trip keeps it; a real version 6 file (no such
// field) reads with none; an unknown spelling, or an exchange in one process, is refused by name.
TEST(Results, GpuExchangeRoundTripsAndVersionSixFilesRead) {
  ResultsDocument doc = plausible_results().get<ResultsDocument>();
  doc.settings.ranks = 2;
  doc.settings.decomposition = "target_range";
  doc.settings.rank_hosts = {"a", "b"};
  doc.settings.gpu_exchange = "nccl";
  const fs::path dir = scratch("gpu-exchange");
  save_results(doc, dir / "results.json");
  const ResultsDocument loaded = load_results(dir / "results.json");
  EXPECT_EQ(loaded.schema_version, kResultsSchemaVersion);
  EXPECT_EQ(loaded.settings.gpu_exchange, "nccl");
  EXPECT_EQ(nlohmann::json(loaded), nlohmann::json(doc));
  fs::remove_all(dir);

  const fs::path v6 = fs::path(NBODY_SOURCE_DIR) / "tests/data/results-schema-6-two-ranks.json";
  const nlohmann::json v6_json = nlohmann::json::parse(std::ifstream(v6));
  ASSERT_EQ(v6_json.value("schema_version", 0), 6);
  ASSERT_FALSE(v6_json["settings"].contains("gpu_exchange"));
  const ResultsDocument old = load_results(v6);
  EXPECT_EQ(old.schema_version, kResultsSchemaVersion);
  EXPECT_EQ(old.settings.ranks, 2);
  EXPECT_TRUE(old.settings.gpu_exchange.empty());
  EXPECT_EQ(old.settings.budget_s, 0);  // version 8's budget: none in older files

  nlohmann::json unknown = nlohmann::json(doc);
  unknown["settings"]["gpu_exchange"] = "pigeons";
  EXPECT_NE(
      load_error(unknown).find("settings.gpu_exchange is 'pigeons'; it must be one of nccl, mpi"),
      std::string::npos)
      << load_error(unknown);
  nlohmann::json alone = nlohmann::json(doc);
  alone["settings"]["ranks"] = 1;
  alone["settings"]["rank_hosts"] = {"a"};
  EXPECT_NE(load_error(alone).find("settings.gpu_exchange is 'nccl' with 1 rank; only runs "
                                   "decomposed over ranks exchange between them"),
            std::string::npos)
      << load_error(alone);
}

// The report says what the median's interval is and what its bracketed coverage means.
TEST(Report, ExplainsTheMediansIntervalAndItsCoverage) {
  ResultsDocument doc = plausible_results().get<ResultsDocument>();
  doc.implementations.push_back(ImplementationRecord(ImplementationInfo{.name = "cpu.soa"}));
  doc.results[0].kernel->ci_confidence = 0.9375;  // five repetitions: [min, max]
  const std::string report = reports::render_markdown(doc, reports::analyze(doc));
  EXPECT_NE(report.find("| CI of median (coverage) |"), std::string::npos);
  EXPECT_EQ(report.find("95% CI of median"), std::string::npos);
  EXPECT_NE(report.find("[min, max], covering 1 − 2^(1−K) of K repetitions: 93.75% for 5"),
            std::string::npos);
  EXPECT_NE(report.find("(94%)"), std::string::npos);
}

// A run decomposed over ranks says so, and how; one in one process says nothing of it.
TEST(Report, SaysHowARunWasDecomposedOverRanks) {
  ResultsDocument doc = plausible_results().get<ResultsDocument>();
  doc.implementations.push_back(ImplementationRecord(ImplementationInfo{.name = "cpu.soa"}));
  EXPECT_EQ(reports::render_markdown(doc, reports::analyze(doc)).find("MPI ranks"),
            std::string::npos);
  doc.settings.ranks = 3;
  doc.settings.decomposition = "target_range";
  doc.settings.rank_hosts = {"b", "a", "b"};
  const std::string report = reports::render_markdown(doc, reports::analyze(doc));
  EXPECT_NE(report.find("Decomposed over 3 MPI ranks on 2 hosts (a, b) by target range: each rank "
                        "computes a slice of the bodies from all N, and the slices are "
                        "all-gathered after every evaluation (the accelerations); a kernel time "
                        "is the slowest rank's computation, an end-to-end time adds the "
                        "all-gather."),
            std::string::npos)
      << report;
  // Version 7: how GPU formulations' slices traveled.
  doc.settings.gpu_exchange = "nccl";
  EXPECT_NE(reports::render_markdown(doc, reports::analyze(doc))
                .find("all-gather. GPU formulations run one GPU per rank, and their slices travel "
                      "between the GPUs by NCCL (ncclAllGather on device buffers)"),
            std::string::npos);
  doc.settings.gpu_exchange = "mpi";
  EXPECT_NE(reports::render_markdown(doc, reports::analyze(doc))
                .find("all-gather. Every formulation's slices travel through host memory "
                      "(MPI_Allgatherv), GPU formulations' too."),
            std::string::npos);
}

TEST(Results, LoadRejectsOtherFiles) {
  const fs::path dir = scratch("load");
  std::ofstream(dir / "bad.json") << "{ not json";
  std::ofstream(dir / "other.json") << R"({"schema": "something else"})";
  EXPECT_THROW(load_results(dir / "bad.json"), UsageError);
  EXPECT_THROW(load_results(dir / "other.json"), UsageError);
  EXPECT_THROW(load_results(dir / "missing.json"), UsageError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nbody
