// nbody-fair scaling: the analysis on hand-made documents (efficiency arithmetic, a missing
// one-device baseline, weak-scaling pairs, GPUs per rank, simulations, disturbances, documents of
// different problems refused), its three printers, the command's bad input, and a real study of
// runs on one and two MPI ranks (skipped, saying why, without mpirun).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nbody/errors.hpp"
#include "nbody/reports/scaling.hpp"
#include "nbody/reports/scaling_report.hpp"
#include "nbody/results.hpp"
#include "nbody_fair_tool.hpp"

extern char** environ;

namespace nbody::reports {
namespace {

namespace fs = std::filesystem;

ResultRecord timed(const std::string& name, std::size_t n, double kernel_s,
                   std::optional<double> communication_s = std::nullopt, int threads = 1) {
  ResultRecord r;
  r.implementation = name;
  r.initial_condition = "uniform";
  r.n = n;
  r.status = Status::ok;
  r.threads = threads;
  r.interactions_credited = static_cast<double>(n) * static_cast<double>(n);
  r.kernel = TimingStatistics{.repetitions = 1, .samples_s = {kernel_s}, .median_s = kernel_s};
  r.kernel->conditions = MeasurementConditions{.wall_seconds = 1, .online_cpus = 2};
  r.kernel_rate = RateFigures{.interactions_per_second = r.interactions_credited / kernel_s};
  if (communication_s) {
    r.communication = r.kernel;
    r.communication->median_s = *communication_s;
    r.end_to_end = r.kernel;
    r.end_to_end->median_s = kernel_s + *communication_s;
  }
  return r;
}

// A run document at `ranks` ranks on one host, with the inputs every document of the study shares.
ResultsDocument run_at(int ranks, std::vector<ResultRecord> results) {
  ResultsDocument doc;
  doc.settings.command = "run";
  doc.settings.initial_condition = "uniform";
  doc.settings.seed = 7;
  doc.settings.softening = 0.01;
  doc.settings.ranks = ranks;
  if (ranks > 1) {
    doc.settings.decomposition = "target_range";
    doc.settings.rank_hosts = std::vector<std::string>(static_cast<std::size_t>(ranks), "vm");
  }
  doc.machine.hostname = "vm";
  doc.machine.cpu_model = "Test CPU";
  doc.machine.logical_cpus = 2;
  const ImplementationRecord soa(ImplementationInfo{.name = "cpu.soa", .device = DeviceKind::cpu});
  const ImplementationRecord gpu(
      ImplementationInfo{.name = "gpu.tuned", .device = DeviceKind::gpu});
  doc.implementations = {soa, gpu};
  for (const std::size_t n : {1000, 2000, 4000}) {
    doc.inputs.push_back({"uniform", n, 7, "f64-" + std::to_string(n), "f32"});
  }
  doc.results = std::move(results);
  return doc;
}

// A simulate document at `ranks` ranks: one record of `name` at N = n, a step of step_s with
// communication_s of all-gathers.
ResultsDocument simulate_at(int ranks, const std::string& name, std::size_t n, double step_s,
                            double communication_s) {
  ResultsDocument doc = run_at(ranks, {});
  doc.settings.command = "simulate";
  doc.settings.dt = 0.001;
  doc.inputs.clear();
  SimulationRecord r;
  r.implementation = name;
  r.initial_condition = "uniform";
  r.n = n;
  r.input_hash = "bodies";
  r.threads = 1;
  r.per_step = {.step_s = step_s,
                .force_s = step_s - communication_s - 1e-5,
                .integration_s = 1e-5,
                .communication_s = communication_s,
                .other_s = communication_s};
  doc.simulations = {r};
  return doc;
}

// The name by value (a view): GCC 13's -Wdangling-reference takes a temporary std::string
// bound to a reference parameter for what the returned reference might point into.
const ScalingPoint& point(const ScalingStudy& study, std::string_view name, std::size_t n,
                          int devices) {
  const auto it = std::find_if(study.points.begin(), study.points.end(), [&](const auto& p) {
    return p.implementation == name && p.n == n && p.scale.devices() == devices;
  });
  EXPECT_NE(it, study.points.end()) << name << " " << n << " " << devices;
  return *it;
}

const AuditRule& rule(const ScalingStudy& study, int number) {
  return *std::find_if(study.audit.begin(), study.audit.end(),
                       [number](const AuditRule& r) { return r.number == number; });
}

// 1 rank: 4 ms at N = 1000, 16 ms at 2000. 2 ranks: 2.4 ms + 0.1 ms gather at 1000, 8.5 + 0.5 at
// 2000; 4 ranks at 4000.
std::vector<ScalingInput> cpu_study() {
  return {{"one/results.json",
           run_at(1, {timed("cpu.soa", 1000, 4e-3), timed("cpu.soa", 2000, 16e-3)})},
          {"two/results.json", run_at(2, {timed("cpu.soa", 1000, 2.4e-3, 0.1e-3),
                                          timed("cpu.soa", 2000, 8.5e-3, 0.5e-3)})},
          {"four/results.json", run_at(4, {timed("cpu.soa", 4000, 30e-3, 2e-3)})}};
}

TEST(ScalingAnalysis, StrongScalingSpeedupAndEfficiencyAgainstOneDevice) {
  const ScalingStudy study = analyze_scaling(cpu_study());
  const ScalingPoint& one = point(study, "cpu.soa", 1000, 1);
  ASSERT_TRUE(one.strong);
  EXPECT_DOUBLE_EQ(*one.strong->total_efficiency, 1.0);
  EXPECT_FALSE(one.total_recorded);  // one process on the CPU: the kernel stands for it
  const ScalingPoint& two = point(study, "cpu.soa", 1000, 2);
  ASSERT_TRUE(two.strong);
  EXPECT_EQ(two.strong->baseline_source, "one/results.json");
  // Whole: 4 / 2.5 = 1.6, efficiency 0.8; compute alone: 4 / 2.4.
  EXPECT_NEAR(*two.strong->total_speedup, 1.6, 1e-12);
  EXPECT_NEAR(*two.strong->total_efficiency, 0.8, 1e-12);
  EXPECT_NEAR(*two.strong->compute_speedup, 4.0 / 2.4, 1e-12);
  EXPECT_NEAR(*two.strong->compute_efficiency, 4.0 / 4.8, 1e-12);
  EXPECT_NEAR(*two.communication_s, 0.1e-3, 1e-15);
  EXPECT_EQ(*two.other_s, 0.0);  // 2.5 - 2.4 - 0.1 ms is zero within rounding: exactly 0
  EXPECT_EQ(two.scale_label, "2 ranks × 1 thread: 2 cores, 0 GPUs, 1 host");
  EXPECT_EQ(rule(study, 8).verdict, RuleVerdict::kept) << rule(study, 8).evidence;
  EXPECT_EQ(study.verdict, "all 3 applicable rules kept");
}

TEST(ScalingAnalysis, WithoutAOneDeviceBaselineThereIsNoEfficiency) {
  std::vector<ScalingInput> inputs = cpu_study();
  inputs.erase(inputs.begin());  // no one-rank document
  const ScalingStudy study = analyze_scaling(inputs);
  for (const ScalingPoint& p : study.points) {
    EXPECT_FALSE(p.strong) << p.implementation << " " << p.n;
    EXPECT_FALSE(p.weak);
    EXPECT_EQ(p.strong_missing, "no one-device measurement of this implementation at this N");
  }
  ASSERT_EQ(study.missing_baselines.size(), 3u);
  EXPECT_EQ(study.missing_baselines.front(),
            "cpu.soa at N = 1000 with 1 thread per rank: no one-device measurement among the "
            "documents, so no speedup or efficiency");
  EXPECT_EQ(rule(study, 8).verdict, RuleVerdict::cannot_tell);
  const std::string markdown = render_scaling_markdown(study);
  EXPECT_NE(markdown.find("## Without a one-device baseline"), std::string::npos);
  EXPECT_NE(markdown.find("— (no one-device measurement of this implementation at this N)"),
            std::string::npos);
}

// Never against another implementation, nor against the same one at other threads per rank.
TEST(ScalingAnalysis, BaselinesAreTheSameImplementationAtTheSameThreadsPerRank) {
  std::vector<ScalingInput> inputs = cpu_study();
  inputs[0].document.implementations.push_back(
      ImplementationRecord(ImplementationInfo{.name = "cpu.tbb", .device = DeviceKind::cpu}));
  inputs[0].document.results.push_back(timed("cpu.tbb", 1000, 1e-3, std::nullopt, 2));
  inputs[1].document.implementations.push_back(
      ImplementationRecord(ImplementationInfo{.name = "cpu.tbb", .device = DeviceKind::cpu}));
  inputs[1].document.results.push_back(timed("cpu.tbb", 1000, 1e-3, 0.1e-3, 1));
  const ScalingStudy study = analyze_scaling(inputs);
  const ScalingPoint& tbb = point(study, "cpu.tbb", 1000, 2);
  EXPECT_FALSE(tbb.strong);  // its one-rank run had 2 threads, this one 1 per rank
  EXPECT_EQ(point(study, "cpu.soa", 1000, 2).strong->baseline_implementation, "cpu.soa");
}

// N_k = k N_1: rate = N² / T, efficiency rate_k / (k rate_1).
TEST(ScalingAnalysis, WeakScalingPairsNOnKDevicesWithNOverKOnOne) {
  const ScalingStudy study = analyze_scaling(cpu_study());
  const ScalingPoint& two = point(study, "cpu.soa", 2000, 2);
  ASSERT_TRUE(two.weak);
  EXPECT_EQ(two.weak->baseline_n, 1000u);
  const double rate_1 = 1000.0 * 1000.0 / 4e-3;
  const double rate_2 = 2000.0 * 2000.0 / 9e-3;
  EXPECT_NEAR(*two.weak->total_rate_per_device, rate_2 / 2, 1e-3);
  EXPECT_NEAR(*two.weak->total_efficiency, rate_2 / (2 * rate_1), 1e-12);
  EXPECT_NEAR(*two.weak->total_efficiency, 2 * 4e-3 / 9e-3, 1e-12);  // k T_1 / T_k
  EXPECT_FALSE(point(study, "cpu.soa", 1000, 2).weak);  // 500 was not measured on one rank
  // 4000 on four ranks pairs with 1000 on one: 4 × 4 / 32 = 0.5.
  const ScalingPoint& four = point(study, "cpu.soa", 4000, 4);
  ASSERT_TRUE(four.weak);
  EXPECT_NEAR(*four.weak->total_efficiency, 4 * 4e-3 / 32e-3, 1e-12);
  EXPECT_FALSE(four.strong);  // 4000 was measured on four ranks alone
}

// GPUs: ranks × the GPUs each rank drives; one rank driving two GPUs against one GPU.
TEST(ScalingAnalysis, GpuFormulationsCountGpus) {
  ResultsDocument one = run_at(1, {timed("gpu.tuned", 2000, 1e-3, std::nullopt)});
  one.results[0].end_to_end = one.results[0].kernel;
  one.results[0].end_to_end->median_s = 1.2e-3;  // the copies
  ResultsDocument both = run_at(1, {timed("gpu.tuned", 2000, 0.5e-3, 0.05e-3)});
  both.settings.gpu_devices = {0, 1};
  both.results[0].end_to_end->median_s = 0.75e-3;
  const ScalingStudy study = analyze_scaling({{"a", one}, {"b", both}});
  const ScalingPoint& two = point(study, "gpu.tuned", 2000, 2);
  EXPECT_EQ(two.scale.gpus, 2);
  EXPECT_EQ(two.scale.ranks, 1);
  EXPECT_EQ(two.scale_label, "2 GPUs: 1 rank × 2 GPUs, 1 core, 1 host");
  EXPECT_NEAR(*two.strong->total_efficiency, 1.2 / (2 * 0.75), 1e-12);
  EXPECT_NEAR(*two.other_s, 0.2e-3, 1e-12);  // end to end less kernel and communication
  EXPECT_NEAR(*point(study, "gpu.tuned", 2000, 1).other_s, 0.2e-3, 1e-12);
}

// Ranks of one GPU each say how their slices travelled: the same scale through NCCL and through
// host memory are two rows a reader must tell apart.
TEST(ScalingAnalysis, GpuRanksNameTheirExchange) {
  const ResultsDocument one = run_at(1, {timed("gpu.tuned", 2000, 1e-3, std::nullopt)});
  ResultsDocument nccl = run_at(2, {timed("gpu.tuned", 2000, 0.5e-3, 0.05e-3)});
  nccl.settings.gpu_exchange = "nccl";
  ResultsDocument mpi = run_at(2, {timed("gpu.tuned", 2000, 0.5e-3, 0.2e-3)});
  mpi.settings.gpu_exchange = "mpi";
  const ScalingStudy study = analyze_scaling({{"a", one}, {"b", nccl}, {"c", mpi}});
  std::vector<std::string> labels;
  for (const ScalingPoint& p : study.points) {
    if (p.scale.devices() == 2) labels.push_back(p.scale_label);
  }
  std::sort(labels.begin(), labels.end());
  EXPECT_EQ(labels, (std::vector<std::string>{
                        "2 GPUs: 2 ranks × 1 GPU, 2 cores, 1 host, NCCL between the ranks",
                        "2 GPUs: 2 ranks × 1 GPU, 2 cores, 1 host, through host memory (MPI)"}));
  EXPECT_EQ(point(study, "gpu.tuned", 2000, 1).scale_label,
            "1 GPU: 1 rank × 1 GPU, 1 core, 1 host");
}

// The scaling model's exchange, where the two-GPU document measured the all-gather between its
// GPUs: alpha + (k - 1) ceil(N / k) b / beta, b = 12 bytes a body (float32 accelerations).
TEST(ScalingAnalysis, TheModelsExchangeFromTheMeasuredAllGather) {
  ResultsDocument one = run_at(1, {timed("gpu.tuned", 2001, 1e-3, std::nullopt)});
  ResultsDocument both = run_at(1, {timed("gpu.tuned", 2001, 0.5e-3, 0.05e-3)});
  both.settings.gpu_devices = {0, 1};
  const auto modeled = [&] {
    return point(analyze_scaling({{"a", one}, {"b", both}}), "gpu.tuned", 2001, 2)
        .modeled_communication_s;
  };
  EXPECT_FALSE(modeled());  // no ceilings
  both.ceilings = Ceilings{};
  both.ceilings->entries = {
      {.name = kGpuAllGatherLatencyCeiling, .device = DeviceKind::gpu, .value = 1e-5, .unit = "s"},
      {.name = kGpuAllGatherBandwidthCeiling,
       .device = DeviceKind::gpu,
       .value = 2e10,
       .unit = "B/s"}};
  ASSERT_TRUE(modeled());
  EXPECT_NEAR(*modeled(), 1e-5 + 1001.0 * 12 / 2e10, 1e-18);
  // Where the latency after a kernel was measured, it is the model's α: a run's exchange pays it.
  both.ceilings->entries.push_back({.name = kGpuAllGatherLatencyAfterKernelCeiling,
                                    .device = DeviceKind::gpu,
                                    .value = 4e-5,
                                    .unit = "s"});
  ASSERT_TRUE(modeled());
  EXPECT_NEAR(*modeled(), 4e-5 + 1001.0 * 12 / 2e10, 1e-18);
  both.ceilings->entries.pop_back();
  EXPECT_FALSE(point(analyze_scaling({{"a", one}, {"b", both}}), "gpu.tuned", 2001, 1)
                   .modeled_communication_s);  // one GPU exchanges nothing
  // In every printer.
  const ScalingStudy study = analyze_scaling({{"a", one}, {"b", both}});
  EXPECT_NE(render_scaling_markdown(study).find("| 500 µs | 50 µs | 10.6 µs |"), std::string::npos)
      << render_scaling_markdown(study);
  EXPECT_NE(render_scaling_csv(study).find("modeled_communication_s"), std::string::npos);
}

// One process driving two GPUs: a step's all-gathers (timed alone) are its communication.
TEST(ScalingAnalysis, SeveralGpusOfOneProcessShowTheirStepsAllGathers) {
  const auto simulate_on = [](std::vector<int> gpus, double step_s, double communication_s) {
    ResultsDocument doc = simulate_at(1, "gpu.tuned", 65536, step_s, communication_s);
    doc.settings.gpu_devices = std::move(gpus);
    return doc;
  };
  const ScalingStudy study = analyze_scaling(
      {{"g1", simulate_on({0}, 2e-3, 0)}, {"g2", simulate_on({0, 1}, 1.07e-3, 3e-5)}});
  EXPECT_NEAR(*point(study, "gpu.tuned", 65536, 2).communication_s, 3e-5, 1e-15);
  EXPECT_FALSE(point(study, "gpu.tuned", 65536, 1).communication_s);
}

TEST(ScalingAnalysis, DisturbedBaselinesFlagTheirFigures) {
  std::vector<ScalingInput> inputs = cpu_study();
  inputs[0].document.results[0].kernel->conditions->disturbances = {"steal took 20% of the CPUs"};
  const ScalingStudy study = analyze_scaling(inputs);
  const ScalingPoint& two = point(study, "cpu.soa", 1000, 2);
  EXPECT_TRUE(two.disturbance.empty());
  EXPECT_EQ(two.strong->disturbance,
            "its one-device baseline: steal took 20% of the CPUs (1 attempt)");
  EXPECT_NE(point(study, "cpu.soa", 2000, 2).weak->disturbance.find("steal"), std::string::npos);
  // The baseline's own, 1000 on two ranks, and the weak pairs 2000 on two and 4000 on four.
  EXPECT_NE(rule(study, 5).evidence.find("1 taken on a disturbed machine, and 4 scaling figures"),
            std::string::npos)
      << rule(study, 5).evidence;
  const std::string csv = render_scaling_csv(study);
  EXPECT_NE(csv.find("steal took 20% of the CPUs (1 attempt),true"), std::string::npos) << csv;
}

TEST(ScalingAnalysis, SimulationsScaleByTheirSteps) {
  const auto soa_at = [](int ranks, double step_s, double communication_s) {
    return simulate_at(ranks, "cpu.soa", 1000, step_s, communication_s);
  };
  const ScalingStudy study =
      analyze_scaling({{"s1", soa_at(1, 4e-3, 0)}, {"s2", soa_at(2, 2.5e-3, 0.4e-3)}});
  const ScalingPoint& two = point(study, "cpu.soa", 1000, 2);
  EXPECT_EQ(two.work, ScalingWork::simulation);
  EXPECT_NEAR(*two.strong->total_efficiency, 0.8, 1e-12);
  EXPECT_NEAR(*two.communication_s, 0.4e-3, 1e-15);
  EXPECT_NEAR(*two.compute_s, 2.1e-3, 1e-15);
  EXPECT_NE(render_scaling_markdown(study).find("## Strong scaling: simulation steps (simulate)"),
            std::string::npos);
  // Two documents of one scale that measured the same thing are a repetition, not a study.
  try {
    analyze_scaling({{"a", soa_at(1, 4e-3, 0)}, {"b", soa_at(1, 3.9e-3, 0)}});
    ADD_FAILURE() << "two runs at one scale were set side by side";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "a and b measured cpu.soa at N = 1000 at one scale: a scaling study sets different "
              "scales side by side (nbody-fair compare sets two runs of one scale against each "
              "other)");
  }
  // Another step is another problem.
  ResultsDocument other_dt = soa_at(2, 2.5e-3, 0.4e-3);
  other_dt.settings.dt = 0.002;
  EXPECT_THROW(analyze_scaling({{"s1", soa_at(1, 4e-3, 0)}, {"s2", other_dt}}), UsageError);
}

TEST(ScalingAnalysis, DocumentsOfDifferentProblemsAndFewerThanTwoAreRefused) {
  std::vector<ScalingInput> inputs = cpu_study();
  const auto refusal = [](const std::vector<ScalingInput>& in) {
    try {
      analyze_scaling(in);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(refusal({inputs[0]}),
            "scaling needs at least 2 results documents (one per rank count or set of GPUs); got "
            "1");
  std::vector<ScalingInput> softening = inputs;
  softening[1].document.settings.softening = 0.05;
  EXPECT_EQ(refusal(softening),
            "one/results.json and two/results.json hold different problems (softening 0.01 "
            "against 0.05): their times cannot be compared");
  std::vector<ScalingInput> seed = inputs;
  seed[2].document.settings.seed = 8;
  EXPECT_NE(refusal(seed).find("(seed 7 against 8)"), std::string::npos);
  std::vector<ScalingInput> ic = inputs;
  ic[1].document.settings.initial_condition = "plummer";
  EXPECT_NE(refusal(ic).find("(initial condition uniform against plummer)"), std::string::npos);
  std::vector<ScalingInput> input = inputs;
  input[1].document.inputs[1].hash_f64 = "other";
  EXPECT_EQ(refusal(input),
            "one/results.json and two/results.json hold different problems (the uniform input of "
            "N = 2000 hashes f64-2000 against other): their times cannot be compared");
}

// ---- the printers ----

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t found = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) {
    ++found;
  }
  return found;
}

TEST(ScalingReports, EveryFormatHasEveryRow) {
  std::vector<ScalingInput> inputs = cpu_study();
  ResultRecord skipped;
  skipped.implementation = "cpu.soa";
  skipped.initial_condition = "uniform";
  skipped.n = 4000;
  skipped.status = Status::skipped;
  skipped.reason = "over --max-eval-seconds";
  inputs[0].document.results.push_back(skipped);
  const ScalingStudy study = analyze_scaling(inputs);
  ASSERT_EQ(study.points.size(), 6u);

  const std::string csv = render_scaling_csv(study);
  EXPECT_EQ(count(csv, "\r\n"), 1 + study.points.size());
  EXPECT_TRUE(
      csv.starts_with("work,implementation,device,precision,initial_condition,n,devices,"
                      "gpus,ranks,threads_per_rank,cores,hosts,scale,document,"));
  EXPECT_NE(csv.find(",skipped,over --max-eval-seconds,"), std::string::npos);

  const std::string markdown = render_scaling_markdown(study);
  // Five timed rows in the strong table, two in the weak one, the skipped one listed.
  EXPECT_EQ(count(markdown, "| cpu.soa | "), 5u + 2u);
  EXPECT_NE(
      markdown.find("| cpu.soa | 1000 | 2 | 2 ranks × 1 thread: 2 cores, 0 GPUs, 1 host | "
                    "2.4 ms | 100 µs | — | 0 | 2.5 ms | 1.6× | 80% | 83% | two/results.json |"),
      std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| cpu.soa | 1000 → 2000 | 2 |"), std::string::npos);
  EXPECT_NE(markdown.find("rate = N² / T; efficiency = rate_k / (k rate_1)"), std::string::npos);
  EXPECT_NE(markdown.find("- cpu.soa at N = 4000 on 1 rank × 1 thread: 1 core, 0 GPUs, 1 host "
                          "(one/results.json): skipped, over --max-eval-seconds"),
            std::string::npos);

  ChartJsSource chartjs{"/* Chart.js stand-in */", ""};
  const std::string html = render_scaling_html(study, chartjs);
  EXPECT_EQ(count(html, "<td>cpu.soa</td>"), 5u + 2u);
  EXPECT_EQ(count(html, "data-kind=\"scalingEfficiency\""), 2u);  // strong and weak
  EXPECT_EQ(count(html, "data-kind=\"scalingSplit\""), 3u);       // N = 1000, 2000, 4000
  const auto begin = html.find("<script type=\"application/json\" id=\"report-data\">");
  ASSERT_NE(begin, std::string::npos);
  const auto start = html.find('>', begin) + 1;
  const nlohmann::json data =
      nlohmann::json::parse(html.substr(start, html.find("</script>", start) - start));
  const nlohmann::json& strong = data["efficiency"][0];
  EXPECT_FALSE(strong["weak"].get<bool>());
  ASSERT_EQ(strong["series"].size(), 2u);  // 1000 and 2000: 4000 has no one-rank baseline
  EXPECT_EQ(strong["series"][0]["name"], "cpu.soa @ 1000 (1 thread/rank)");
  EXPECT_DOUBLE_EQ(strong["series"][0]["points"][1]["y"].get<double>(), 0.8);
  EXPECT_EQ(strong["series"][0]["points"][1]["k"], 2);
  const nlohmann::json& weak = data["efficiency"][1];
  EXPECT_TRUE(weak["weak"].get<bool>());
  EXPECT_EQ(weak["series"][0]["points"].size(), 3u);  // 1000 on one, 2000 on two, 4000 on four
  const nlohmann::json& split = data["splits"][0];
  EXPECT_EQ(split["n"], 1000);
  EXPECT_EQ(split["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(split["rows"][1]["seconds"]["communication"].get<double>(), 0.1e-3);
  EXPECT_EQ(split["rows"][1]["lines"][2], "2 cores, 0 GPUs, 1 host");

  ChartJsSource none{std::nullopt, "Chart.js was not found at /nowhere"};
  EXPECT_NE(render_scaling_html(study, none).find("No charts: Chart.js was not found at /nowhere"),
            std::string::npos);
}

// The same two GPUs joined three ways are three lines from the one-GPU point, and every bar's
// label breaks into lines short enough for the axis.
TEST(ScalingReports, WaysOfJoiningTheSameGpusAreLinesOfTheirOwn) {
  const ResultsDocument one = run_at(1, {timed("gpu.tuned", 2000, 1e-3, std::nullopt)});
  ResultsDocument process = run_at(1, {timed("gpu.tuned", 2000, 0.5e-3, 0.02e-3)});
  process.settings.gpu_devices = {0, 1};
  ResultsDocument nccl = run_at(2, {timed("gpu.tuned", 2000, 0.5e-3, 0.05e-3)});
  nccl.settings.gpu_exchange = "nccl";
  ResultsDocument mpi = run_at(2, {timed("gpu.tuned", 2000, 0.5e-3, 0.2e-3)});
  mpi.settings.gpu_exchange = "mpi";
  const ScalingStudy study = analyze_scaling({{"a", one}, {"b", process}, {"c", nccl}, {"d", mpi}});
  const std::string html = render_scaling_html(study, ChartJsSource{"/* stand-in */", ""});
  const auto begin = html.find("<script type=\"application/json\" id=\"report-data\">");
  ASSERT_NE(begin, std::string::npos);
  const auto start = html.find('>', begin) + 1;
  const nlohmann::json data =
      nlohmann::json::parse(html.substr(start, html.find("</script>", start) - start));
  std::vector<std::string> names;
  for (const nlohmann::json& series : data["efficiency"][0]["series"]) {
    names.push_back(series["name"]);
    ASSERT_EQ(series["points"].size(), 2u) << series.dump();
    EXPECT_EQ(series["points"][0]["k"], 1);  // each line starts at the one-GPU point
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gpu.tuned @ 2000, the GPUs of one process",
                                             "gpu.tuned @ 2000, ranks, NCCL between them",
                                             "gpu.tuned @ 2000, ranks, through host memory"}));
  for (const nlohmann::json& row : data["splits"][0]["rows"]) {
    for (const nlohmann::json& line : row["lines"]) {
      EXPECT_LE(line.get<std::string>().size(), 26u) << row["lines"].dump();
    }
  }
  EXPECT_EQ(data["splits"][0]["rows"][2]["lines"],
            (nlohmann::json{"gpu.tuned", "2 GPUs:", "2 ranks × 1 GPU,", "2 cores, 1 host,",
                            "NCCL between the ranks"}));
}

// ---- the command ----

using testing::CommandResult;
using testing::run_program;
using testing::run_tool;
using testing::scratch;

TEST(ScalingCommand, BadInputExitsTwoWithOneLineAndWritesNothing) {
  const fs::path dir = scratch("bad");
  const std::vector<ScalingInput> study = cpu_study();
  fs::create_directories(dir / "one");
  save_results(study[0].document, dir / "one" / "results.json");
  save_results(study[1].document, dir / "two.json");
  ResultsDocument other = study[1].document;
  other.settings.softening = 0.05;
  save_results(other, dir / "other.json");
  std::ofstream(dir / "broken.json") << "{\"schema\": ";
  fs::create_directories(dir / "empty");
  const std::string one = (dir / "one").string(), two = (dir / "two.json").string();
  const std::string out = (dir / "out").string();
  const std::vector<std::vector<std::string>> cases = {
      {"scaling", one, (dir / "missing.json").string(), "--out", out},
      {"scaling", one, (dir / "broken.json").string(), "--out", out},
      {"scaling", one, (dir / "empty").string(), "--out", out},
      {"scaling", one, (dir / "other.json").string(), "--out", out},
      {"scaling", one, "--out", out},
      {"scaling", one, two},
      {"scaling", one, two, (dir / "one" / "results.json").string(), "--out", out},
  };
  for (const auto& args : cases) {
    const CommandResult r = run_tool(args);
    EXPECT_EQ(r.exit_code, 2) << args[2] << ": " << r.stderr_text;
    EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
    EXPECT_TRUE(r.stderr_text.starts_with("nbody-fair: ")) << r.stderr_text;
    EXPECT_FALSE(fs::exists(out)) << "left " << out << " behind";
  }
  const CommandResult good = run_tool({"scaling", one, two, "--out", out});
  EXPECT_EQ(good.exit_code, 0) << good.stderr_text;
  for (const char* file : {"scaling.md", "scaling.html", "scaling.csv"}) {
    EXPECT_TRUE(fs::exists(fs::path(out) / file)) << file;
  }
  fs::remove_all(dir);
}

// Real documents: cpu.soa on one rank and on two (mpirun), at 1000 and 2000 bodies.
TEST(ScalingCommand, ARealStudyOfOneAndTwoRanks) {
  if (!NBODY_FAIR_HAS_MPI) {
    GTEST_SKIP() << "this nbody-fair was built without MPI: under mpirun each rank would run alone";
  }
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "mpirun not found: install openmpi-bin";
  }
  const fs::path dir = scratch("real");
  const std::string mpirun_sh = std::string(NBODY_SOURCE_DIR) + "/tests/mpirun.sh";
  for (const char* ranks : {"1", "2"}) {
    const CommandResult run =
        run_program({mpirun_sh, ranks, NBODY_FAIR_EXE, "run", "--impl", "^cpu\\.soa$", "--sizes",
                     "1000,2000", "--reps", "3", "--min-time", "0.02", "--max-attempts", "1",
                     "--out", (dir / (std::string("np") + ranks)).string()});
    ASSERT_EQ(run.exit_code, 0) << run.stderr_text << run.stdout_text;
  }
  const CommandResult scaling = run_tool(
      {"scaling", (dir / "np1").string(), (dir / "np2").string(), "--out", (dir / "s").string()});
  ASSERT_EQ(scaling.exit_code, 0) << scaling.stderr_text;
  EXPECT_NE(scaling.stdout_text.find("Fairness audit: all 3 applicable rules kept"),
            std::string::npos)
      << scaling.stdout_text;
  std::ifstream csv_in(dir / "s" / "scaling.csv");
  const std::string csv((std::istreambuf_iterator<char>(csv_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(count(csv, "\r\n"), 5u);  // the header, 2 sizes × 2 scales
  EXPECT_EQ(count(csv, "\"2 ranks × 1 thread: 2 cores, 0 GPUs, 1 host\""), 2u);
  std::ifstream md_in(dir / "s" / "scaling.md");
  const std::string markdown((std::istreambuf_iterator<char>(md_in)),
                             std::istreambuf_iterator<char>());
  EXPECT_NE(markdown.find("| cpu.soa | 1000 → 2000 | 2 |"), std::string::npos) << markdown;
  // The two-rank run's own audit now checks rule 8.
  std::ifstream report(dir / "np2" / "report.md");
  const std::string np2((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(np2.find("| 8. Same scale | kept |"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nbody::reports
