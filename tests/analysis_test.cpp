// The analysis layer on hand-made results: the headline and its intervals, the ladders, the
// roofline's ceilings, the repetitions, each rule of the fairness audit kept and broken, and a
// simulate run's series (energy error against time, the step's split, the speedups).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "nbody/errors.hpp"
#include "nbody/reports/analysis.hpp"
#include "nbody/reports/combined_sides.hpp"
#include "nbody/reports/html_report.hpp"
#include "nbody/reports/markdown_report.hpp"
#include "simulation_document.hpp"
#include "tree_results.hpp"

namespace nbody::reports {
namespace {

// report.md as report writes it.
std::string markdown_of(const ResultsDocument& document) {
  return render_markdown(document, analyze(document));
}

ImplementationRecord implementation(std::string name, DeviceKind device, Role role,
                                    AccuracyClass accuracy = AccuracyClass::full) {
  ImplementationRecord i;
  i.name = std::move(name);
  i.device = device;
  i.role = role;
  i.accuracy_class = accuracy;
  i.available = true;
  return i;
}

// A timed, validated measurement whose median time gives `rate` at N = n, with a CI of ±10% in
// time and five repetitions.
ResultRecord measured(std::string name, std::size_t n, double rate, int threads = 1,
                      std::string isa = "") {
  ResultRecord r;
  r.implementation = std::move(name);
  r.initial_condition = "uniform";
  r.n = n;
  r.input_hash = "f32hash";
  r.interactions_credited = static_cast<double>(n) * static_cast<double>(n);
  r.pairs_evaluated = n * n;
  r.threads = threads;
  if (!isa.empty()) r.details["isa"] = isa;
  const double median = r.interactions_credited / rate;
  TimingStatistics t;
  t.repetitions = 5;
  t.samples_s = {median * 0.95, median, median, median * 1.05, median * 1.1};
  t.median_s = median;
  t.ci_low_s = median * 0.9;
  t.ci_high_s = median * 1.1;
  t.ci_confidence = 0.9375;
  t.conditions = MeasurementConditions{.wall_seconds = 1, .online_cpus = 16};
  r.kernel = t;
  r.kernel_rate = RateFigures{.interactions_per_second = rate};
  AccuracyRecord a;
  a.metrics.relative_l2 = 1e-7;
  a.relative_l2_bound = 1e-6;
  a.passed = true;
  r.accuracy = a;
  return r;
}

ResultsDocument document() {
  ResultsDocument doc;
  doc.command_line = {"nbody-fair", "run"};
  doc.complete = true;
  doc.machine.hostname = "host";
  doc.machine.cpu_model = "Test CPU";
  doc.machine.logical_cpus = 16;
  doc.machine.isa_features = {"sse4.2", "avx2", "avx512f"};
  doc.machine.gpus = {GpuDescription{.name = "Test GPU"}};
  doc.build.cxx_compiler = "GNU 12";
  doc.settings.seed = 1;
  doc.settings.softening = 0.01;
  doc.inputs = {{"uniform", 1024, 1, "f64hash", "f32hash"},
                {"uniform", 4096, 1, "f64hash4", "f32hash"}};
  doc.implementations = {implementation("cpu.aos", DeviceKind::cpu, Role::naive_baseline),
                         implementation("cpu.simd.approx", DeviceKind::cpu, Role::optimized,
                                        AccuracyClass::approximate),
                         implementation("cpu.tbb", DeviceKind::cpu, Role::optimized),
                         implementation("gpu.aos", DeviceKind::gpu, Role::naive_baseline),
                         implementation("gpu.tuned", DeviceKind::gpu, Role::optimized)};
  doc.results = {measured("cpu.aos", 1024, 1e8),
                 measured("cpu.simd.approx", 1024, 9e10, 1, "avx512f"),
                 measured("cpu.tbb", 1024, 4e10, 16, "avx512f"), measured("gpu.aos", 1024, 1e10),
                 measured("gpu.tuned", 1024, 2e12)};
  for (ResultRecord& r : doc.results) {
    if (r.implementation.starts_with("gpu")) {
      r.end_to_end = r.kernel;
      r.end_to_end->median_s *= 2;
    }
  }
  Ceilings ceilings;
  ceilings.machine.hostname = "host";
  ceilings.machine.cpu_model = "Test CPU";
  ceilings.entries = {
      CeilingEntry{
          .name = kGpuFp32FlopsCeiling, .device = DeviceKind::gpu, .value = 6e13, .unit = "FLOP/s"},
      CeilingEntry{.name = kGpuInteractionMixCeiling,
                   .device = DeviceKind::gpu,
                   .value = 2e12,
                   .unit = "int/s"},
      CeilingEntry{.name = kGpuMemoryBandwidthCeiling,
                   .device = DeviceKind::gpu,
                   .value = 3e12,
                   .unit = "B/s"}};
  doc.ceilings = ceilings;
  doc.results.back().counters =
      CounterReadout{.source = "test", .unavailable_reason = {}, .metrics = {}, .derived = {}};
  doc.results.back().counters->derived.gflops_counted = 36000;
  doc.results.back().counters->derived.arithmetic_intensity_flops_per_dram_byte = 700;
  return doc;
}

const AuditRule& rule(const Analysis& a, int number) {
  return a.audit.rules.at(number - 1);
}

TEST(Analysis, HeadlineComparesBestWithBestAndNaiveWithNaiveWithIntervals) {
  const Analysis a = analyze(document());
  ASSERT_EQ(a.headline.rows.size(), 1u);
  const HeadlineRow& row = a.headline.rows.front();
  ASSERT_TRUE(row.best_cpu && row.best_gpu && row.naive_cpu && row.naive_gpu);
  EXPECT_EQ(row.best_cpu->implementation, "cpu.tbb");  // the faster approximate one is not ranked
  EXPECT_EQ(row.best_gpu->implementation, "gpu.tuned");
  EXPECT_EQ(row.naive_cpu->implementation, "cpu.aos");
  ASSERT_TRUE(row.best_ratio && row.naive_ratio);
  EXPECT_DOUBLE_EQ(row.best_ratio->value, 50);
  // Rates from the ±10% time interval: GPU within [2e12/1.1, 2e12/0.9], CPU likewise.
  EXPECT_NEAR(row.best_ratio->low, 50 * 0.9 / 1.1, 1e-9);
  EXPECT_NEAR(row.best_ratio->high, 50 * 1.1 / 0.9, 1e-9);
  EXPECT_DOUBLE_EQ(row.naive_ratio->value, 100);
  EXPECT_TRUE(a.headline.disturbed_figures.empty());
}

TEST(Analysis, LadderStepsHaveSpeedupsOverThePreviousRungAndOverNaive) {
  const Analysis a = analyze(document());
  const auto cpu = std::find_if(a.ladders.begin(), a.ladders.end(),
                                [](const Ladder& l) { return l.device == DeviceKind::cpu; });
  ASSERT_NE(cpu, a.ladders.end());
  ASSERT_EQ(cpu->steps.size(), 2u);  // the approximate class is not a rung
  EXPECT_EQ(cpu->steps[1].implementation, "cpu.tbb");
  EXPECT_DOUBLE_EQ(*cpu->steps[1].over_previous, 400);
  EXPECT_DOUBLE_EQ(*cpu->steps[1].over_naive, 400);
  // At N = 4096 nothing was measured: no ladder there.
  EXPECT_TRUE(std::none_of(a.ladders.begin(), a.ladders.end(),
                           [](const Ladder& l) { return l.n == 4096; }));
}

// A run on several GPUs without counters measures only the all-gather between them: no ceiling
// of the kernels, so rule 6 cannot tell, and says what was measured.
TEST(Audit, TheAllGatherAloneIsNoCeilingOfTheKernels) {
  ResultsDocument doc = document();
  doc.ceilings->entries = {
      {.name = kGpuAllGatherLatencyCeiling, .device = DeviceKind::gpu, .value = 1e-5, .unit = "s"},
      {.name = kGpuAllGatherBandwidthCeiling,
       .device = DeviceKind::gpu,
       .value = 3e11,
       .unit = "B/s"}};
  const Analysis a = analyze(doc);
  const AuditRule& six = rule(a, 6);
  EXPECT_EQ(six.verdict, RuleVerdict::cannot_tell);
  EXPECT_NE(six.evidence.find("only the all-gather between the GPUs"), std::string::npos)
      << six.evidence;
}

TEST(Analysis, RooflineHasTheMeasuredCeilingsAndTheMixInFlops) {
  ResultsDocument doc = document();
  // A run on several GPUs also records the all-gather between them: a link, no roof.
  doc.ceilings->entries.push_back({.name = kGpuAllGatherBandwidthCeiling,
                                   .device = DeviceKind::gpu,
                                   .value = 3e11,
                                   .unit = "B/s"});
  doc.ceilings->entries.push_back(
      {.name = kGpuAllGatherLatencyCeiling, .device = DeviceKind::gpu, .value = 1e-5, .unit = "s"});
  const Analysis a = analyze(doc);
  ASSERT_EQ(a.rooflines.size(), 1u);
  const Roofline& gpu = a.rooflines.front();
  EXPECT_EQ(gpu.device, DeviceKind::gpu);
  ASSERT_EQ(gpu.points.size(), 1u);
  EXPECT_DOUBLE_EQ(gpu.points.front().flops_per_second, 3.6e13);
  EXPECT_DOUBLE_EQ(*gpu.points.front().flops_per_dram_byte, 700);
  const auto mix =
      std::find_if(gpu.ceilings.begin(), gpu.ceilings.end(),
                   [](const RooflineCeiling& c) { return c.name == kGpuInteractionMixCeiling; });
  ASSERT_NE(mix, gpu.ceilings.end());
  EXPECT_DOUBLE_EQ(mix->value, 2e12 * 18);
  EXPECT_EQ(std::count_if(gpu.ceilings.begin(), gpu.ceilings.end(),
                          [](const RooflineCeiling& c) { return c.memory; }),
            1);
}

// A run with float64 on both sides: its own headline row, best against best and naive
// against naive where both naive exist, a float64 CPU ladder, and the CPU roofline with the float64
// FMA ceilings the float64 kernels' fractions are taken against.
TEST(Analysis, Float64OnBothSidesHasItsOwnHeadlineRowLadderAndCeilings) {
  ResultsDocument doc = document();
  for (ImplementationRecord i :
       {implementation("cpu.soa.f64", DeviceKind::cpu, Role::naive_baseline),
        implementation("cpu.tbb.f64", DeviceKind::cpu, Role::optimized),
        implementation("gpu.tuned.f64", DeviceKind::gpu, Role::optimized)}) {
    i.precision = Precision::f64;
    doc.implementations.push_back(i);
  }
  // cpu.tbb.f64 faster than cpu.tbb would not make it the float32 row's best CPU.
  doc.results.push_back(measured("cpu.soa.f64", 1024, 5e7));
  doc.results.push_back(measured("cpu.tbb.f64", 1024, 5e10, 16, "avx512f"));
  doc.results.push_back(measured("gpu.tuned.f64", 1024, 6e11));
  doc.results.back().counters =
      CounterReadout{.source = "test", .unavailable_reason = {}, .metrics = {}, .derived = {}};
  doc.results.back().counters->derived.gflops_counted = 12000;
  ResultRecord& cpu_f64 = doc.results[doc.results.size() - 2];
  cpu_f64.counters = CounterReadout{
      .source = "disassembly", .unavailable_reason = {}, .metrics = {}, .derived = {}};
  cpu_f64.counters->derived.gflops_counted = 1250;
  cpu_f64.counters->derived.fraction_of_measured_peak = 0.78;
  for (const bool all_cores : {false, true}) {
    doc.ceilings->entries.push_back({.name = cpu_fp32_flops_ceiling("avx512f", all_cores),
                                     .device = DeviceKind::cpu,
                                     .value = all_cores ? 3.2e12 : 2e11,
                                     .unit = "FLOP/s",
                                     .threads = all_cores ? 16 : 1,
                                     .isa = "avx512f"});
    doc.ceilings->entries.push_back({.name = cpu_fp64_flops_ceiling("avx512f", all_cores),
                                     .device = DeviceKind::cpu,
                                     .value = all_cores ? 1.6e12 : 1e11,
                                     .unit = "FLOP/s",
                                     .threads = all_cores ? 16 : 1,
                                     .isa = "avx512f"});
  }
  const Analysis a = analyze(doc);

  ASSERT_EQ(a.headline.rows.size(), 2u);
  const HeadlineRow& f32 = a.headline.rows[0];
  EXPECT_EQ(f32.precision, Precision::f32);
  EXPECT_EQ(f32.best_cpu->implementation, "cpu.tbb");
  const HeadlineRow& f64 = a.headline.rows[1];
  EXPECT_EQ(f64.precision, Precision::f64);
  ASSERT_TRUE(f64.best_cpu && f64.best_gpu && f64.best_ratio);
  EXPECT_EQ(f64.best_cpu->implementation, "cpu.tbb.f64");
  EXPECT_EQ(f64.best_gpu->implementation, "gpu.tuned.f64");
  EXPECT_DOUBLE_EQ(f64.best_ratio->value, 12);
  ASSERT_TRUE(f64.naive_cpu);
  EXPECT_EQ(f64.naive_cpu->implementation, "cpu.soa.f64");
  EXPECT_FALSE(f64.naive_gpu);  // no float64 naive GPU kernel: no naive ratio, never a mixed one
  EXPECT_FALSE(f64.naive_ratio);

  const auto ladder = std::find_if(a.ladders.begin(), a.ladders.end(), [](const Ladder& l) {
    return l.device == DeviceKind::cpu && l.precision == Precision::f64;
  });
  ASSERT_NE(ladder, a.ladders.end());
  ASSERT_EQ(ladder->steps.size(), 2u);
  EXPECT_DOUBLE_EQ(*ladder->steps[1].over_naive, 1000);

  const auto cpu_roof = std::find_if(a.rooflines.begin(), a.rooflines.end(),
                                     [](const Roofline& r) { return r.device == DeviceKind::cpu; });
  ASSERT_NE(cpu_roof, a.rooflines.end());
  const auto fp64_all = std::find_if(
      cpu_roof->ceilings.begin(), cpu_roof->ceilings.end(),
      [](const RooflineCeiling& c) { return c.name == cpu_fp64_flops_ceiling("avx512f", true); });
  ASSERT_NE(fp64_all, cpu_roof->ceilings.end());
  EXPECT_EQ(fp64_all->label, "avx512f FP64 FMA, 16 cores");
  EXPECT_DOUBLE_EQ(fp64_all->value, 1.6e12);

  const auto fraction =
      std::find_if(a.peak_fractions.begin(), a.peak_fractions.end(),
                   [](const PeakFractions& f) { return f.implementation == "cpu.tbb.f64"; });
  ASSERT_NE(fraction, a.peak_fractions.end());
  EXPECT_DOUBLE_EQ(*fraction->of_measured_peak, 0.78);

  // Without a float64 CPU kernel the CPU roofline keeps to the float32 roofs.
  ResultsDocument float32_cpu = doc;
  std::erase_if(float32_cpu.implementations, [](const ImplementationRecord& i) {
    return i.device == DeviceKind::cpu && i.precision == Precision::f64;
  });
  for (const Roofline& r : analyze(float32_cpu).rooflines) {
    for (const RooflineCeiling& c : r.ceilings)
      EXPECT_FALSE(c.name.starts_with("cpu.fp64")) << c.name;
  }
}

TEST(Analysis, RepetitionsAndEndToEndAreReadOffTheTimings) {
  const Analysis a = analyze(document());
  ASSERT_EQ(a.repetitions.size(), 5u);
  EXPECT_EQ(a.repetitions.front().interactions_per_second.size(), 5u);
  ASSERT_EQ(a.end_to_end.size(), 2u);
  EXPECT_DOUBLE_EQ(a.end_to_end.front().copy_share(), 0.5);
}

TEST(Audit, AnHonestRunKeepsEveryApplicableRule) {
  const Analysis a = analyze(document());
  ASSERT_EQ(a.audit.rules.size(), 10u);
  for (int number = 1; number <= 7; ++number) {
    EXPECT_EQ(rule(a, number).verdict, RuleVerdict::kept)
        << number << ": " << rule(a, number).evidence;
  }
  EXPECT_EQ(rule(a, 8).verdict, RuleVerdict::not_applicable);
  EXPECT_EQ(rule(a, 9).verdict, RuleVerdict::not_applicable);
  EXPECT_EQ(rule(a, 10).verdict, RuleVerdict::not_applicable);  // it recorded no energy
  EXPECT_EQ(a.audit.verdict, "all 7 applicable rules kept");
}

TEST(Audit, EachBrokenRuleIsNamedWithItsEvidence) {
  {
    ResultsDocument doc = document();
    doc.results[2].input_hash = "other";
    const Analysis a = analyze(doc);
    EXPECT_EQ(rule(a, 1).verdict, RuleVerdict::not_kept);
    EXPECT_NE(rule(a, 1).evidence.find("cpu.tbb at N = 1024"), std::string::npos);
    EXPECT_NE(a.audit.verdict.find("not kept: rule 1 (Same problem)"), std::string::npos)
        << a.audit.verdict;
  }
  {
    ResultsDocument doc = document();
    doc.results[2].threads = 4;  // the best CPU on a quarter of the machine
    const Analysis a = analyze(doc);
    EXPECT_EQ(rule(a, 3).verdict, RuleVerdict::not_kept);
    EXPECT_NE(rule(a, 3).evidence.find("4 threads"), std::string::npos);
  }
  {
    ResultsDocument doc = document();
    doc.results[2].details["isa"] = "avx2";  // not the widest ISA the machine has
    EXPECT_EQ(rule(analyze(doc), 3).verdict, RuleVerdict::not_kept);
  }
  {
    ResultsDocument doc = document();
    doc.results[0].interactions_credited /= 2;  // pairs credited instead of N^2
    EXPECT_EQ(rule(analyze(doc), 4).verdict, RuleVerdict::not_kept);
  }
  {
    ResultsDocument doc = document();
    doc.results[4].end_to_end.reset();
    EXPECT_EQ(rule(analyze(doc), 4).verdict, RuleVerdict::not_kept);
  }
  {
    ResultsDocument doc = document();
    doc.ceilings.reset();
    EXPECT_EQ(rule(analyze(doc), 6).verdict, RuleVerdict::cannot_tell);
    doc = document();
    doc.ceilings->machine.hostname = "elsewhere";
    EXPECT_EQ(rule(analyze(doc), 6).verdict, RuleVerdict::not_kept);
  }
  {
    ResultsDocument doc = document();
    doc.command_line.clear();
    EXPECT_EQ(rule(analyze(doc), 7).verdict, RuleVerdict::not_kept);
  }
  {
    ResultsDocument doc = document();
    doc.results[1].accuracy->passed = false;  // a failure that is not ranked keeps rule 2
    doc.results[1].status = Status::failed;
    doc.results[1].reason = "accuracy";
    const Analysis a = analyze(doc);
    EXPECT_EQ(rule(a, 2).verdict, RuleVerdict::kept);
    EXPECT_NE(rule(a, 2).evidence.find("1 failed and not ranked"), std::string::npos);
  }
}

// On an Arm host the widest ISA is read from the aarch64 list: NEON, which SVE at 128 bits (Grace,
// Graviton 4) is no wider than, while a wider SVE (A64FX) leaves the suite's NEON kernels short.
TEST(Audit, ArmHostsWidestIsaIsNeonUnlessItsSveIsWider) {
  ResultsDocument doc = document();
  doc.machine.cpu_model = "Arm Neoverse V2 (MIDR 0x410fd4f1)";
  doc.machine.isa_features = {"neon64", "sve128", "sve2"};
  for (ResultRecord& r : doc.results) {
    if (r.details.contains("isa")) r.details["isa"] = "neon64";
  }
  const AuditRule kept = rule(analyze(doc), 3);
  EXPECT_EQ(kept.verdict, RuleVerdict::kept) << kept.evidence;
  EXPECT_NE(kept.evidence.find("the widest ISA the machine has (e.g. cpu.tbb at N = 1024 (16 "
                               "threads, neon64)); the machine's SVE, at 128 bits, is no wider "
                               "than neon64"),
            std::string::npos)
      << kept.evidence;

  doc.machine.isa_features = {"neon64", "sve2", "sve512"};  // "sve2" is no length
  const AuditRule short_of_machine = rule(analyze(doc), 3);
  EXPECT_EQ(short_of_machine.verdict, RuleVerdict::not_kept);
  EXPECT_NE(short_of_machine.evidence.find(
                "used neon64, but the machine's SVE is 512 bits wide and this suite has no SVE "
                "kernels"),
            std::string::npos)
      << short_of_machine.evidence;

  doc.results[2].details["isa"] = "scalar";  // not NEON: short of the machine too
  doc.machine.isa_features = {"neon64", "sve128"};
  EXPECT_EQ(rule(analyze(doc), 3).verdict, RuleVerdict::not_kept);
}

TEST(Audit, DisturbedMeasurementsAreNamedInTheAuditAndTheHeadline) {
  ResultsDocument doc = document();
  doc.results[2].kernel->conditions->disturbances = {"other processes took 40% of the 16 CPUs"};
  doc.results[2].kernel->conditions->attempts = 3;
  const Analysis a = analyze(doc);
  EXPECT_EQ(rule(a, 5).verdict, RuleVerdict::kept);  // flagged, as the rule asks
  EXPECT_NE(rule(a, 5).evidence.find("cpu.tbb at N = 1024"), std::string::npos);
  ASSERT_EQ(a.audit.disturbed_measurements.size(), 1u);
  EXPECT_NE(a.audit.verdict.find("1 measurements taken on a disturbed machine are flagged, 1 of "
                                 "them in the headline"),
            std::string::npos)
      << a.audit.verdict;
  ASSERT_EQ(a.headline.disturbed_figures.size(), 1u);
  EXPECT_EQ(a.headline.disturbed_figures.front().implementation, "cpu.tbb");
  const std::string markdown = markdown_of(doc);
  EXPECT_LT(markdown.find("## Fairness audit"), markdown.find("## Headline"));
  EXPECT_NE(markdown.find("other processes took 40% of the 16 CPUs (3 attempts)"),
            std::string::npos);
}

// Rule 8 in one document: not applicable in one process; over several devices kept where each
// ratio sets all GPUs of a host against all its cores and every headline figure names its scale,
// not kept where one side had only part of the host.
TEST(Audit, SameScaleOverSeveralDevices) {
  {
    ResultsDocument doc = document();
    doc.settings.gpu_devices = {0};  // one GPU named is still one device
    EXPECT_EQ(rule(analyze(doc), 8).verdict, RuleVerdict::not_applicable);
  }
  // Two hosts of 16 CPUs and 2 GPUs each, one rank per host driving both GPUs, cpu.tbb on 16
  // threads per rank: whole hosts against whole hosts.
  ResultsDocument doc = document();
  doc.machine.gpus = {GpuDescription{.ordinal = 0, .name = "Test GPU"},
                      GpuDescription{.ordinal = 1, .name = "Test GPU"}};
  doc.settings.ranks = 2;
  doc.settings.decomposition = "target_range";
  doc.settings.rank_hosts = {"a", "b"};
  doc.settings.gpu_devices = {0, 1};
  const Analysis kept = analyze(doc);
  EXPECT_EQ(rule(kept, 8).verdict, RuleVerdict::kept) << rule(kept, 8).evidence;
  EXPECT_NE(rule(kept, 8).evidence.find("gpu.tuned on 2 of the host's 2 GPUs against cpu.tbb "
                                        "on 16 of the host's 16 cores"),
            std::string::npos)
      << rule(kept, 8).evidence;
  EXPECT_EQ(kept.audit.verdict, "all 8 applicable rules kept");
  const HeadlineRow& row = kept.headline.rows.front();
  EXPECT_EQ(row.best_cpu->scale_label, "2 ranks × 16 threads: 32 cores, 0 GPUs, 2 hosts");
  EXPECT_EQ(row.best_gpu->scale_label, "4 GPUs: 2 ranks × 2 GPUs, 2 cores, 2 hosts");
  doc.settings.command = "run";
  const std::string markdown = markdown_of(doc);
  EXPECT_NE(markdown.find("(gpu.tuned; 4 GPUs: 2 ranks × 2 GPUs, 2 cores, 2 hosts)"),
            std::string::npos)
      << markdown;

  // One GPU of each host's two against all its cores: unlike.
  doc.settings.gpu_devices = {0};
  const Analysis unlike = analyze(doc);
  EXPECT_EQ(rule(unlike, 8).verdict, RuleVerdict::not_kept);
  EXPECT_NE(rule(unlike, 8).evidence.find("gpu.tuned on 1 of the host's 2 GPUs"), std::string::npos)
      << rule(unlike, 8).evidence;

  // A CPU-only run over two ranks of one host: nothing paired, every figure labelled.
  ResultsDocument cpu_only = document();
  cpu_only.machine.gpus.clear();
  std::erase_if(cpu_only.results,
                [](const ResultRecord& r) { return r.implementation.starts_with("gpu"); });
  cpu_only.settings.ranks = 2;
  cpu_only.settings.rank_hosts = {"a", "a"};
  const Analysis alone = analyze(cpu_only);
  EXPECT_EQ(rule(alone, 8).verdict, RuleVerdict::kept) << rule(alone, 8).evidence;
  EXPECT_NE(rule(alone, 8).evidence.find("sets no CPU against a GPU"), std::string::npos);
}

TEST(Audit, FilesWithoutConditionsCannotShowStatisticsKept) {
  ResultsDocument doc = document();
  for (ResultRecord& r : doc.results) r.kernel->conditions.reset();
  const Analysis a = analyze(doc);
  EXPECT_EQ(rule(a, 5).verdict, RuleVerdict::cannot_tell);
  EXPECT_NE(a.audit.verdict.find("cannot tell: rule 5"), std::string::npos);
}

TEST(Simulation, EachRowHasItsEnergyErrorsAgainstTimeInStepOrder) {
  ResultsDocument doc = testing::simulation_document();
  // Out of order on purpose: the chart's line needs them by step.
  std::swap(doc.simulations[0].conservation[1], doc.simulations[0].conservation[3]);
  const Analysis a = analyze(doc);
  ASSERT_EQ(a.integration.size(), 4u);
  const IntegrationRow& cpu = a.integration[0];
  ASSERT_EQ(cpu.energy_errors.size(), 5u);  // steps 0, 25, 50, 75, 100
  for (std::size_t i = 0; i < cpu.energy_errors.size(); ++i) {
    const EnergyErrorPoint& p = cpu.energy_errors[i];
    EXPECT_EQ(p.step, static_cast<std::int64_t>(25 * i));
    EXPECT_DOUBLE_EQ(p.time, 0.01 * static_cast<double>(p.step));
    EXPECT_DOUBLE_EQ(p.relative_energy_error, 1.2345678901234567e-8 * static_cast<double>(p.step));
  }
  EXPECT_TRUE(a.integration[1].energy_errors.empty());  // skipped
}

TEST(Simulation, StepSharesAddToOneAndCountNoiseBelowZeroAsZero) {
  const Analysis a = analyze(testing::simulation_document());
  ASSERT_EQ(a.integration.size(), 4u);
  const IntegrationRow& gpu = a.integration[2];
  ASSERT_EQ(gpu.implementation, "gpu.tuned");
  ASSERT_TRUE(gpu.shares.has_value());
  const StepShares& s = *gpu.shares;
  EXPECT_DOUBLE_EQ(s.total_s, 1.5e-5 + 6e-6 + 1e-5);  // other (-1 µs) left out
  EXPECT_DOUBLE_EQ(s.force, 1.5e-5 / s.total_s);
  EXPECT_DOUBLE_EQ(s.other, 0);
  EXPECT_DOUBLE_EQ(s.snapshots, 0);
  EXPECT_NEAR(s.force + s.integration + s.other + s.diagnostics + s.snapshots, 1, 1e-15);
  EXPECT_FALSE(a.integration[1].shares.has_value());  // skipped: nothing timed
}

TEST(Simulation, ApplicationAndKernelSpeedupsWhereBothSidesFinished) {
  const Analysis a = analyze(testing::simulation_document());
  // N = 4096 has no CPU simulation that finished.
  ASSERT_EQ(a.application_speedups.size(), 1u);
  const ApplicationSpeedup& s = a.application_speedups[0];
  EXPECT_EQ(s.n, 1024u);
  EXPECT_EQ(s.cpu, "cpu.tbb");
  EXPECT_EQ(s.gpu, "gpu.tuned");
  EXPECT_NEAR(s.kernel_speedup, 60, 1e-9);
  EXPECT_NEAR(s.application_speedup, 35, 1e-9);
  EXPECT_TRUE(analyze(testing::simulation_document(false)).application_speedups.empty());
}

TEST(Simulation, MarkdownNamesTheChartsOfReportHtml) {
  const std::string markdown = markdown_of(testing::simulation_document());
  EXPECT_NE(markdown.find("relative energy error against time"), std::string::npos);
  EXPECT_NE(markdown.find("report.html"), std::string::npos);
}

// ---- a run that measured one side only ----

// The CPU side alone, the GPU formulations unavailable: the run says so first, why and what to do;
// the audit is not all green, and every evidence line is true of this run.
ResultsDocument cpu_side_only(const std::string& gpu_reason) {
  ResultsDocument doc = document();
  doc.build.cuda_compiler = "NVIDIA 13.0";
  doc.machine.gpus.clear();
  std::erase_if(doc.results,
                [](const ResultRecord& r) { return r.implementation.starts_with("gpu"); });
  for (ImplementationRecord& i : doc.implementations) {
    if (i.device != DeviceKind::gpu) continue;
    i.available = false;
    i.unavailable_reason = gpu_reason;
    ResultRecord skipped;
    skipped.implementation = i.name;
    skipped.initial_condition = "uniform";
    skipped.n = 1024;
    skipped.status = Status::skipped;
    skipped.reason = gpu_reason;
    doc.results.push_back(skipped);
  }
  return doc;
}

TEST(MeasuredSides, ARunWithoutAGpuSaysSoFirstAndItsAuditIsNotAllGreen) {
  const std::string why = "no NVIDIA GPU or driver found (no NVIDIA driver is installed or loaded)";
  const ResultsDocument doc = cpu_side_only(why);
  const Analysis a = analyze(doc);
  EXPECT_TRUE(a.sides.cpu);
  EXPECT_FALSE(a.sides.gpu);
  EXPECT_EQ(a.sides.missing, "no GPU measured: " + why);
  EXPECT_TRUE(a.audit.verdict.starts_with("no GPU measured, no ratio: ")) << a.audit.verdict;
  EXPECT_EQ(rule(a, 3).verdict, RuleVerdict::cannot_tell);
  EXPECT_NE(rule(a, 3).evidence.find(why), std::string::npos);
  for (const AuditRule& r : a.audit.rules) {
    // Nothing said of a GPU this run did not measure.
    EXPECT_EQ(r.evidence.find("against one GPU"), std::string::npos) << r.evidence;
    EXPECT_EQ(r.evidence.find("GPU time"), std::string::npos) << r.evidence;
    EXPECT_EQ(r.evidence.find("device events on the GPU"), std::string::npos) << r.evidence;
    EXPECT_EQ(r.evidence.find("ratios pair"), std::string::npos) << r.evidence;
  }
  const std::string first = "No GPU/CPU ratio from this run: no GPU measured: " + why +
                            ". It measured the CPU side only; for the ratio, run the same command "
                            "on a machine with an NVIDIA GPU and its driver";
  EXPECT_TRUE(render_summary(doc).starts_with(first)) << render_summary(doc);
  const std::string markdown = markdown_of(doc);
  EXPECT_LT(markdown.find(first), markdown.find("## Fairness audit")) << markdown;
}

TEST(MeasuredSides, SayWhyOfTheBuildAndTheSelection) {
  ResultsDocument cpu_only_build = cpu_side_only("this nbody-fair was built without CUDA");
  cpu_only_build.build.cuda_compiler.clear();
  const MeasuredSides build = measured_sides(cpu_only_build);
  EXPECT_EQ(build.missing,
            "no GPU measured: this nbody-fair was built without CUDA (a CPU-only build)");
  EXPECT_NE(build.remedy.find("install the CUDA toolkit"), std::string::npos) << build.remedy;

  ResultsDocument unselected = document();
  unselected.build.cuda_compiler = "NVIDIA 13.0";
  unselected.settings.implementation_pattern = "^cpu";
  std::erase_if(unselected.implementations,
                [](const ImplementationRecord& i) { return i.device == DeviceKind::gpu; });
  std::erase_if(unselected.results,
                [](const ResultRecord& r) { return r.implementation.starts_with("gpu"); });
  EXPECT_EQ(measured_sides(unselected).missing,
            "no GPU measured: no GPU formulation was selected (--impl '^cpu')");

  const Analysis both = analyze(document());
  EXPECT_TRUE(both.sides.compares());
  EXPECT_TRUE(both.sides.missing.empty());
  EXPECT_EQ(markdown_of(document()).find("No GPU/CPU ratio"), std::string::npos);
}

// The fixture's CPU simulation at N = 1024, made to go wrong as a cold uniform ball does: it
// collapses (2K/|W| 0 at the start, the potential 3.6 times deeper by the end) and loses 2.6e-3
// of its energy, as the float64 leapfrog of the same steps does.
ResultsDocument collapsed_simulation() {
  ResultsDocument doc = testing::simulation_document(false);
  SimulationRecord& r = doc.simulations.front();
  r.conservation.front().virial_ratio = 0;
  r.conservation.front().potential_energy = -0.6;
  r.conservation.back().potential_energy = -2.15;
  r.conservation.back().relative_energy_error = 2.6e-3;
  r.max_relative_energy_error = 2.6e-3;
  r.divergence->reference_energy_error = 2.5e-3;
  doc.settings.dt = 1.0 / 256;
  return doc;
}

// A simulation that went wrong says so first, in every printer and in the audit, with its likely
// cause; the fixture's, within its bounds, says nothing and keeps rule 2.
TEST(Conservation, ACollapseIsFlaggedFirstEverywhereWithItsLikelyCause) {
  const ResultsDocument fine = testing::simulation_document(false);
  const Analysis a_fine = analyze(fine);
  for (const IntegrationRow& r : a_fine.integration) {
    if (r.conservation) {
      EXPECT_TRUE(r.conservation->within()) << r.implementation;
    }
  }
  EXPECT_EQ(rule(a_fine, 2).verdict, RuleVerdict::kept) << rule(a_fine, 2).evidence;
  EXPECT_EQ(render_summary(fine).find("not to be trusted"), std::string::npos);

  const ResultsDocument doc = collapsed_simulation();
  const Analysis a = analyze(doc);
  const ConservationCheck& check = *a.integration.front().conservation;
  EXPECT_FALSE(check.within());
  EXPECT_EQ(check.energy_bound, 1e-4);
  EXPECT_NE(check.likely_cause.find("a collapse"), std::string::npos) << check.likely_cause;
  EXPECT_NE(check.likely_cause.find("steps per dynamical time"), std::string::npos)
      << check.likely_cause;
  EXPECT_EQ(rule(a, 2).verdict, RuleVerdict::not_kept);
  EXPECT_NE(rule(a, 2).evidence.find("cpu.tbb at N = 1024"), std::string::npos);
  for (const int number : {3, 4, 5, 6, 8}) {
    EXPECT_EQ(rule(a, number).verdict, RuleVerdict::not_applicable) << number;
  }
  // First: before any table a reader could take for an answer.
  const std::string summary = render_summary(doc);
  EXPECT_LT(summary.find("not to be trusted"), summary.find("## "));
  const std::string markdown = markdown_of(doc);
  EXPECT_LT(markdown.find("not to be trusted"), markdown.find("## "));
  EXPECT_NE(markdown.find("## Conservation"), std::string::npos);
  EXPECT_NE(markdown.find("## Fairness audit"), std::string::npos);
  const std::string page = render_html(doc, a, {"var Chart;", ""});
  EXPECT_LT(page.find("id=\"went-wrong\""), page.find("<section"));
  EXPECT_NE(page.find("id=\"conservation\""), std::string::npos);
}

// Where the integration kept its energy but the formulation lost more than its precision may
// add, the precision is named; momentum beyond rounding's walk is flagged as unequal forces.
TEST(Conservation, PrecisionAndMomentumAreNamedAsTheirCauses) {
  ResultsDocument doc = testing::simulation_document(false);
  SimulationRecord& r = doc.simulations.front();
  r.divergence->reference_energy_error = 1e-7;  // 2 x 1e-7 + 4u = 2.6e-7 < 1.2e-6
  ConservationCheck check = *analyze(doc).integration.front().conservation;
  EXPECT_FALSE(check.energy_within());
  EXPECT_NE(check.likely_cause.find("the formulation's precision"), std::string::npos)
      << check.likely_cause;

  doc = testing::simulation_document(false);
  doc.simulations.front().conservation.back().momentum = {1e-3, 0, 0};
  check = *analyze(doc).integration.front().conservation;
  EXPECT_TRUE(check.energy_within());
  EXPECT_FALSE(check.momentum_within());
  EXPECT_NE(check.likely_cause.find("equal and opposite"), std::string::npos) << check.likely_cause;
}

// The CPU side of a laptop's run and the GPU side of a cloud GPU's run of the same problem: one
// report, whose first lines and audit say the sides came from different machines.
TEST(CombinedSides, ALaptopsCpuAndACloudGpuMakeOneFairReport) {
  ResultsDocument laptop = document();
  laptop.settings.command = "run";
  laptop.machine.hostname = "laptop";
  laptop.machine.cpu_model = "Laptop CPU";
  laptop.machine.gpus.clear();
  laptop.ceilings->machine = {.hostname = "laptop", .cpu_model = "Laptop CPU"};
  ResultsDocument cloud = document();
  cloud.settings.command = "run";
  cloud.machine.hostname = "cloud";
  cloud.ceilings->machine.hostname = "cloud";
  const ResultsDocument both = combine_sides({laptop, "laptop/"}, {cloud, "cloud/"});
  EXPECT_EQ(both.machine.cpu_model, "Laptop CPU");
  ASSERT_EQ(both.machine.gpus.size(), 1u);
  for (const ResultRecord& r : both.results) {
    const ImplementationRecord* impl = find_implementation(both, r.implementation);
    ASSERT_NE(impl, nullptr) << r.implementation;
  }
  EXPECT_EQ(both.results.size(), laptop.results.size());  // 3 CPU records and 2 GPU records
  const Analysis a = analyze(both);
  EXPECT_TRUE(a.sides.compares());
  EXPECT_EQ(rule(a, 1).verdict, RuleVerdict::kept);
  EXPECT_NE(rule(a, 1).evidence.find("different machines"), std::string::npos)
      << rule(a, 1).evidence;
  EXPECT_NE(rule(a, 1).evidence.find("host laptop"), std::string::npos);
  EXPECT_NE(rule(a, 6).evidence.find("each side's own machine"), std::string::npos)
      << rule(a, 6).evidence;
  const std::string markdown = markdown_of(both);
  EXPECT_LT(markdown.find("Two runs, one side each"), markdown.find("## "));
  EXPECT_NE(render_summary(both).find("different machines"), std::string::npos);
}

// Runs that are not of one problem, or not runs, or lack their side, are refused naming the
// option.
TEST(CombinedSides, RunsOfDifferentProblemsOrWithoutTheirSideAreRefused) {
  ResultsDocument cpu = document();
  cpu.settings.command = "run";
  const auto refusal = [&](const ResultsDocument& gpu) {
    try {
      combine_sides({cpu, "a"}, {gpu, "b"});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  ResultsDocument other_seed = cpu;
  other_seed.settings.seed = 2;
  EXPECT_NE(refusal(other_seed).find("--gpu-from: b is of another problem"), std::string::npos)
      << refusal(other_seed);
  ResultsDocument other_bodies = cpu;
  other_bodies.inputs.front().hash_f64 = "different";
  EXPECT_NE(refusal(other_bodies).find("not the same bodies"), std::string::npos)
      << refusal(other_bodies);
  ResultsDocument simulation = cpu;
  simulation.settings.command = "simulate";
  EXPECT_NE(refusal(simulation).find("not a run"), std::string::npos) << refusal(simulation);
  ResultsDocument no_gpu = cpu;
  std::erase_if(no_gpu.results,
                [](const ResultRecord& r) { return r.implementation.starts_with("gpu"); });
  EXPECT_NE(refusal(no_gpu).find("--gpu-from: b measured no gpu formulation"), std::string::npos)
      << refusal(no_gpu);
}

// ---- trees beside all-pairs (FAIRNESS rule 9), on tree_results.hpp's run ----

bool has(const std::string& text, std::string_view what) {
  return text.find(what) != std::string::npos;
}

const BarHeadlineRow& bar_row(const Analysis& a, std::size_t bar, std::size_t n) {
  const auto it = std::find_if(a.algorithms.rows.begin(), a.algorithms.rows.end(),
                               [&](const BarHeadlineRow& r) { return r.bar == bar && r.n == n; });
  EXPECT_NE(it, a.algorithms.rows.end()) << "bar " << bar << " N " << n;
  return *it;
}

const Crossover& crossover(const Analysis& a, DeviceKind device, std::size_t bar) {
  const auto it =
      std::find_if(a.algorithms.crossovers.begin(), a.algorithms.crossovers.end(),
                   [&](const Crossover& c) { return c.device == device && c.bar == bar; });
  EXPECT_NE(it, a.algorithms.crossovers.end());
  return *it;
}

TEST(Trees, AreLeftOutOfEveryAllPairsAnalysis) {
  const Analysis a = analyze(testing::all_pairs_and_trees());
  // The headline: sizes where an all-pairs formulation ran, never a tree (the faster one at
  // 16384 included), and no row at 65536 where only trees ran.
  ASSERT_EQ(a.headline.rows.size(), 3u);
  for (const HeadlineRow& row : a.headline.rows) {
    EXPECT_EQ(row.best_cpu->implementation, "cpu.tbb");
    EXPECT_EQ(row.best_gpu->implementation, "gpu.tuned");
  }
  for (const Ladder& l : a.ladders) {
    EXPECT_EQ(l.steps.size(), 2u);
    for (const LadderStep& step : l.steps) EXPECT_FALSE(has(step.implementation, "tree"));
  }
  for (const AccuracyPoint& p : a.accuracy) EXPECT_FALSE(has(p.implementation, "tree"));
  for (const RepetitionSamples& r : a.repetitions) EXPECT_FALSE(has(r.implementation, "tree"));
  for (const EndToEndRow& r : a.end_to_end) EXPECT_FALSE(has(r.implementation, "tree"));
  const std::string md = markdown_of(testing::all_pairs_and_trees());
  EXPECT_FALSE(has(md, " 0 int/s")) << md;
  EXPECT_FALSE(has(md, "| cpu.tree[theta=0.5] | 1024 | ok")) << "a tree in the rates' table";
  EXPECT_TRUE(has(md, "Tree formulations (Barnes–Hut) are credited no interactions"));
}

TEST(Trees, TableHasTimeBuildAndInteractionsPerBody) {
  const Analysis a = analyze(testing::all_pairs_and_trees());
  ASSERT_EQ(a.algorithms.trees.size(), 12u);
  const TreeRow& t = a.algorithms.trees.front();
  EXPECT_EQ(t.implementation, "cpu.tree[theta=0.5]");
  EXPECT_EQ(t.theta, 0.5);
  EXPECT_EQ(t.n, 1024u);
  EXPECT_DOUBLE_EQ(*t.median_s, 1e-4);
  EXPECT_DOUBLE_EQ(*t.bodies_per_second, 1024 / 1e-4);
  EXPECT_DOUBLE_EQ(*t.build_share, 0.2);
  EXPECT_DOUBLE_EQ(*t.body_body_per_body, 100);
  EXPECT_DOUBLE_EQ(*t.body_cell_per_body, 50);
  EXPECT_DOUBLE_EQ(*t.relative_l2, 3e-3);
  const std::string md = markdown_of(testing::all_pairs_and_trees());
  EXPECT_TRUE(has(md, "## Tree codes")) << md;
  EXPECT_TRUE(has(md, "| cpu.tree[theta=0.5] | 0.5 | 1024 | cpu | f32 | 100 µs ")) << md;
}

TEST(Trees, EachBarHasTheFastestOfEachDeviceThatMeetsIt) {
  const Analysis a = analyze(testing::all_pairs_and_trees());
  ASSERT_EQ(a.algorithms.bars.size(), 4u);
  // Relative L2 <= 1e-2 at 16384: the wide trees on both sides; CPU time over GPU time.
  const BarHeadlineRow& loose = bar_row(a, 0, 16384);
  ASSERT_TRUE(loose.cpu && loose.gpu && loose.gpu_over_cpu);
  EXPECT_EQ(loose.cpu->implementation, "cpu.tree[theta=0.5]");
  EXPECT_EQ(loose.gpu->implementation, "gpu.tree[theta=0.5]");
  EXPECT_DOUBLE_EQ(loose.gpu_over_cpu->value, 15);
  EXPECT_NEAR(loose.gpu_over_cpu->low, 15 * 0.9 / 1.1, 1e-9);
  EXPECT_NEAR(loose.gpu_over_cpu->high, 15 * 1.1 / 0.9, 1e-9);
  // The float32 all-pairs class asks both errors: the narrow tree's L2 meets it at 16384, its
  // maximum does not, so all-pairs is fastest there.
  EXPECT_EQ(bar_row(a, 3, 16384).cpu->implementation, "cpu.tbb");
  // At 65536 only trees ran: the narrow tree meets 1e-4 on the CPU; nothing of the GPU does.
  const BarHeadlineRow& tight = bar_row(a, 2, 65536);
  ASSERT_TRUE(tight.cpu);
  EXPECT_EQ(tight.cpu->implementation, "cpu.tree[theta=0.2]");
  EXPECT_FALSE(tight.gpu);
  EXPECT_TRUE(tight.gpu_measured);
  EXPECT_FALSE(tight.gpu_over_cpu);
  const std::string md = markdown_of(testing::all_pairs_and_trees());
  EXPECT_TRUE(has(md, "## Across algorithms at equal accuracy")) << md;
  // The cell stands under "fastest GPU": naming the GPU again would read "GPU GPU …" where a
  // phone labels the cell.
  EXPECT_TRUE(has(md, "— (nothing meets it)")) << md;
  EXPECT_FALSE(has(md, "of the GPU meets it")) << md;
}

TEST(Trees, CrossoverIsWhereATreeWinsAtEveryLargerComparedSize) {
  const Analysis a = analyze(testing::all_pairs_and_trees());
  const Crossover& cpu_loose = crossover(a, DeviceKind::cpu, 0);
  EXPECT_EQ(cpu_loose.compared_sizes, (std::vector<std::size_t>{1024, 4096, 16384}));
  EXPECT_EQ(cpu_loose.tree_from, 4096u);
  EXPECT_EQ(crossover(a, DeviceKind::cpu, 1).tree_from, 16384u);
  // At 65536 the narrow tree meets the float32 class, but no all-pairs ran there to compare.
  EXPECT_FALSE(crossover(a, DeviceKind::cpu, 3).tree_from);
  EXPECT_EQ(crossover(a, DeviceKind::gpu, 0).tree_from, 16384u);
  EXPECT_FALSE(crossover(a, DeviceKind::gpu, 1).tree_from);
  const std::string md = markdown_of(testing::all_pairs_and_trees());
  EXPECT_TRUE(has(md, "CPU, relative L2 ≤ 1e-2: a tree overtakes all-pairs at N = 4096")) << md;
  EXPECT_TRUE(has(md,
                  "GPU, relative L2 ≤ 1e-3: no crossover within the measured sizes (up to "
                  "N = 16384"))
      << md;
}

TEST(Trees, ParetoFrontMarksTheFormulationsNoneBeats) {
  const Analysis a = analyze(testing::all_pairs_and_trees());
  const auto front = std::find_if(
      a.algorithms.fronts.begin(), a.algorithms.fronts.end(),
      [](const ParetoFront& f) { return f.device == DeviceKind::cpu && f.n == 16384; });
  ASSERT_NE(front, a.algorithms.fronts.end());
  ASSERT_EQ(front->points.size(), 4u);
  std::map<std::string, bool> on_front;
  for (const ParetoPoint& p : front->points) on_front[p.figure.implementation] = p.on_front;
  EXPECT_TRUE(on_front.at("cpu.tbb"));
  EXPECT_TRUE(on_front.at("cpu.tree[theta=0.2]"));
  EXPECT_TRUE(on_front.at("cpu.tree[theta=0.5]"));
  EXPECT_FALSE(on_front.at("cpu.aos"));  // as accurate as cpu.tbb, and slower
  // By error, most accurate first.
  EXPECT_LE(front->points.front().figure.relative_l2, front->points.back().figure.relative_l2);
}

TEST(Trees, RuleNineKeptNotKeptAndNotApplicable) {
  {
    const Analysis a = analyze(testing::all_pairs_and_trees());
    for (int number = 1; number <= 7; ++number) {
      EXPECT_EQ(rule(a, number).verdict, RuleVerdict::kept)
          << number << ": " << rule(a, number).evidence;
    }
    EXPECT_EQ(rule(a, 9).verdict, RuleVerdict::kept) << rule(a, 9).evidence;
    EXPECT_TRUE(rule(a, 9).evidence.starts_with("12 tree measurements (θ = 0.2, 0.5)"))
        << rule(a, 9).evidence;
    EXPECT_TRUE(has(rule(a, 9).evidence, "4 accuracy bars × 4 sizes")) << rule(a, 9).evidence;
    EXPECT_TRUE(has(rule(a, 9).evidence, "4 of 8 crossovers found")) << rule(a, 9).evidence;
    EXPECT_EQ(a.audit.verdict, "all 8 applicable rules kept");
  }
  const auto broken = [](auto spoil) {
    ResultsDocument doc = testing::all_pairs_and_trees();
    spoil(doc.results[2]);  // cpu.tree[theta=0.5] at 1024
    return analyze(doc);
  };
  const Analysis rated =
      broken([](ResultRecord& r) { r.kernel_rate = RateFigures{.interactions_per_second = 1e12}; });
  EXPECT_EQ(rule(rated, 9).verdict, RuleVerdict::not_kept);
  EXPECT_TRUE(has(rule(rated, 9).evidence, "credited interactions or given a rate"));
  // A tree with a rate is still no figure of the all-pairs headline.
  EXPECT_EQ(rated.headline.rows.front().best_cpu->implementation, "cpu.tbb");
  EXPECT_EQ(
      rule(broken([](ResultRecord& r) { r.interactions_credited = 1024.0 * 1024; }), 9).verdict,
      RuleVerdict::not_kept);
  const Analysis unmeasured = broken([](ResultRecord& r) { r.accuracy.reset(); });
  EXPECT_EQ(rule(unmeasured, 9).verdict, RuleVerdict::not_kept);
  EXPECT_TRUE(has(rule(unmeasured, 9).evidence, "no accuracy measured"));
  const Analysis other_input = broken([](ResultRecord& r) { r.input_hash = "another"; });
  EXPECT_EQ(rule(other_input, 9).verdict, RuleVerdict::not_kept);
  EXPECT_TRUE(has(rule(other_input, 9).evidence, "another input"));
  EXPECT_TRUE(other_input.audit.verdict.starts_with("6 of 8 applicable rules kept"))
      << other_input.audit.verdict;  // rule 1 sees the same input hash differ
  // No tree: one algorithm, nothing to compare.
  EXPECT_EQ(rule(analyze(document()), 9).verdict, RuleVerdict::not_applicable);
  EXPECT_FALSE(analyze(document()).algorithms.any_tree());
  EXPECT_FALSE(has(markdown_of(document()), "Across algorithms"));
}

TEST(Trees, SimulationShowsTheTreeBuildWithinTheForceTime) {
  ResultsDocument doc = testing::simulation_document();
  SimulationRecord& sim = doc.simulations.front();  // cpu.tbb's, taken for a tree's here
  ImplementationRecord& tree = doc.implementations.at(1);
  ASSERT_EQ(tree.name, sim.implementation);
  tree.algorithm = Algorithm::barnes_hut;
  tree.theta = 0.5;
  sim.per_step.tree_build_s = sim.per_step.force_s / 4;
  const Analysis a = analyze(doc);
  const IntegrationRow& row = a.integration.front();
  ASSERT_TRUE(row.shares);
  EXPECT_NEAR(row.shares->tree_build * 3, row.shares->force, 1e-12);
  EXPECT_TRUE(has(markdown_of(doc), "(tree build ")) << markdown_of(doc);
  EXPECT_EQ(rule(a, 9).verdict, RuleVerdict::not_applicable);
  EXPECT_TRUE(has(rule(a, 9).evidence, "audited in the reports of `nbody-fair run`"));
}

// ---- Each tree against its own bounds (FAIRNESS rules 3 and 6) ----

const TreeRow& tree_row(const Analysis& a, std::string_view name, std::size_t n) {
  const auto it =
      std::find_if(a.algorithms.trees.begin(), a.algorithms.trees.end(),
                   [&](const TreeRow& t) { return t.implementation == name && t.n == n; });
  EXPECT_NE(it, a.algorithms.trees.end()) << name << " at " << n;
  return *it;
}

ResultsDocument trees_with_bounds(const testing::TreeRates& rates = {}) {
  ResultsDocument doc = testing::all_pairs_and_trees();
  testing::add_tree_bounds(doc, rates);
  return doc;
}

TEST(TreeBounds, WalkAndBuildAgainstTheirBoundsFromTheCostsAndTheCeilings) {
  const Analysis a = analyze(trees_with_bounds());
  // cpu.tree[theta=0.5] at 16384: 1.5 ms, its build a fifth; 200 units a body at 2e9 a second,
  // 100 bytes a body at 1e10 bytes a second.
  const TreeRow& cpu = tree_row(a, "cpu.tree[theta=0.5]", 16384);
  ASSERT_TRUE(cpu.walk_s && cpu.walk_bound_s && cpu.walk_fraction_of_bound);
  EXPECT_DOUBLE_EQ(*cpu.walk_s, 1.5e-3 - 0.3e-3);
  EXPECT_DOUBLE_EQ(*cpu.walk_bound_s, 200.0 * 16384 / 2e9);
  EXPECT_DOUBLE_EQ(*cpu.walk_fraction_of_bound, *cpu.walk_bound_s / *cpu.walk_s);
  ASSERT_TRUE(cpu.build_bound_s && cpu.build_fraction_of_bound && cpu.fraction_of_bound);
  EXPECT_DOUBLE_EQ(*cpu.build_bound_s, 100.0 * 16384 / 1e10);
  EXPECT_DOUBLE_EQ(*cpu.build_fraction_of_bound, *cpu.build_bound_s / 0.3e-3);
  EXPECT_DOUBLE_EQ(*cpu.fraction_of_bound, (*cpu.walk_bound_s + *cpu.build_bound_s) / 1.5e-3);
  EXPECT_TRUE(cpu.walk_bound_missing.empty() && cpu.build_bound_missing.empty());
  // The GPU's walk at its interaction mix, its build at its own bandwidth.
  const TreeRow& gpu = tree_row(a, "gpu.tree[theta=0.5]", 65536);
  EXPECT_DOUBLE_EQ(*gpu.walk_fraction_of_bound, 250.0 * 65536 / (2e11 * 3e-4));
  EXPECT_DOUBLE_EQ(*gpu.build_fraction_of_bound, 500.0 * 65536 / (1e12 * 3e-4));
  // A CPU ceiling measured on more threads than the tree used is scaled to its threads (as the
  // all-pairs instruction bounds are); FLOP/s rating FMA instructions at half their value.
  ResultsDocument scaled = trees_with_bounds();
  for (ResultRecord& r : scaled.results) {
    if (r.implementation.starts_with("cpu.tree")) r.threads = 8;
    if (r.implementation.starts_with("gpu.tree")) r.tree_work->costs->walk_scale = 0.5;
  }
  const Analysis half = analyze(scaled);
  EXPECT_DOUBLE_EQ(*tree_row(half, "cpu.tree[theta=0.5]", 16384).walk_bound_s,
                   2 * *cpu.walk_bound_s);
  EXPECT_DOUBLE_EQ(*tree_row(half, "gpu.tree[theta=0.5]", 65536).walk_bound_s,
                   2 * *gpu.walk_bound_s);
  // The tables show both parts against their bounds.
  const std::string md = markdown_of(trees_with_bounds());
  EXPECT_TRUE(has(md, "| walk: of its bound | build: of its bound |")) << md;
  const long walk_percent = std::lround(100 * *cpu.walk_fraction_of_bound);
  EXPECT_TRUE(has(md, "| " + std::to_string(walk_percent) + "% (bound ")) << md;
}

TEST(TreeBounds, WithoutACeilingOrACostModelEachFractionSaysWhy) {
  // Results older than version 11: no cost model.
  const Analysis old = analyze(testing::all_pairs_and_trees());
  const TreeRow& t = tree_row(old, "cpu.tree[theta=0.5]", 1024);
  EXPECT_FALSE(t.walk_fraction_of_bound || t.build_fraction_of_bound || t.fraction_of_bound);
  EXPECT_EQ(t.walk_bound_missing, "results older than schema version 11 record no cost model");
  EXPECT_TRUE(has(
      markdown_of(testing::all_pairs_and_trees()),
      "24 fractions of bound missing: results older than schema version 11 record no cost model"));
  EXPECT_TRUE(has(rule(old, 3).evidence, "for trees it cannot tell")) << rule(old, 3).evidence;
  // No ceilings measured (--no-counters).
  ResultsDocument unmeasured = trees_with_bounds();
  unmeasured.ceilings.reset();
  const Analysis none = analyze(unmeasured);
  EXPECT_EQ(tree_row(none, "gpu.tree[theta=0.5]", 1024).walk_bound_missing,
            "the run measured no ceilings");
  EXPECT_TRUE(has(rule(none, 3).evidence,
                  "for trees it cannot tell: cpu.tree[theta=0.2] has no fraction of its walk's "
                  "bound (the run measured no ceilings)"))
      << rule(none, 3).evidence;
  EXPECT_EQ(rule(none, 3).verdict, RuleVerdict::kept);  // the all-pairs' effort is still shown
  // One entry missing, with the reason the run gave; the other part keeps its fraction.
  ResultsDocument no_avx512 = trees_with_bounds();
  std::vector<CeilingEntry>& entries = no_avx512.ceilings->entries;
  const std::string cpu_walk = cpu_flops_ceiling(Precision::f32, "avx512f", true);
  std::erase_if(entries, [&](const CeilingEntry& e) { return e.name == cpu_walk; });
  no_avx512.ceilings->unavailable.push_back({cpu_walk, "avx512f not supported by this CPU"});
  const Analysis without_avx512 = analyze(no_avx512);
  const TreeRow& cpu = tree_row(without_avx512, "cpu.tree[theta=0.5]", 1024);
  EXPECT_EQ(cpu.walk_bound_missing, "no " + cpu_walk + ": avx512f not supported by this CPU");
  EXPECT_FALSE(cpu.walk_fraction_of_bound || cpu.fraction_of_bound);
  EXPECT_TRUE(cpu.build_fraction_of_bound);
}

// The two sides' trees at the largest N both timed (65536): the CPU's fastest meeting relative
// L2 <= 1e-3 (θ = 0.2, 16 ms), the GPU's fastest (θ = 0.5, 0.3 ms: none of its trees meets it).
TEST(TreeBounds, RuleThreeShowsBothSidesAndNamesAGapOverOneAndAHalf) {
  // The CPU's walk at 250 × 65536 / (2e9 × 0.016) = 51%, the GPU's at 250 × 65536 / (2e11 ×
  // 3e-4) = 27%: 1.9×, the GPU further from its bound.
  const Analysis gpu_further = analyze(trees_with_bounds());
  const AuditRule& three = rule(gpu_further, 3);
  EXPECT_EQ(three.verdict, RuleVerdict::kept);
  EXPECT_TRUE(has(three.evidence,
                  "trees against their own bounds: f32 at N = 65536: cpu.tree[theta=0.2] at 51% "
                  "(walk) and 20% (build) of its bounds against gpu.tree[theta=0.5] at 27% (walk) "
                  "and 11% (build) of its bounds; the GPU's tree is 1.9× further from its walk's "
                  "bound than the CPU's (over 1.5×), so the ratio at equal accuracy may understate "
                  "the GPU"))
      << three.evidence;
  // The CPU's walk at 13%: the CPU further, 2.1×.
  const Analysis cpu_slower = analyze(trees_with_bounds({.cpu_walk = 8e9}));
  const AuditRule& cpu_further = rule(cpu_slower, 3);
  EXPECT_TRUE(has(cpu_further.evidence,
                  "the CPU's tree is 2.1× further from its walk's bound than the GPU's (over "
                  "1.5×), so the ratio at equal accuracy may overstate the GPU"))
      << cpu_further.evidence;
  // The GPU's walk at 46% against the CPU's 51%: both shown, no gap said.
  const Analysis near = analyze(trees_with_bounds({.gpu_walk = 1.2e11}));
  const AuditRule& close = rule(near, 3);
  EXPECT_TRUE(has(close.evidence, "gpu.tree[theta=0.5] at 46% (walk)")) << close.evidence;
  EXPECT_FALSE(has(close.evidence, "further from")) << close.evidence;
  // Without the walks' fractions, the whole evaluations' are compared.
  ResultsDocument no_walk = trees_with_bounds();
  for (ResultRecord& r : no_walk.results) {
    if (r.tree_work) r.tree_work->build.reset();
  }
  const Analysis without_walks = analyze(no_walk);
  const AuditRule& whole = rule(without_walks, 3);
  EXPECT_TRUE(has(whole.evidence,
                  "cpu.tree[theta=0.2] at — (walk) and — (build) of its bounds, "
                  "45% as a whole"))
      << whole.evidence;
  EXPECT_TRUE(has(whole.evidence,
                  "the GPU's tree is 1.9× further from its whole evaluation's "
                  "bound than the CPU's"))
      << whole.evidence;
}

// Float64 trees are held to the same rule: both sides' fractions shown, at their own largest N.
TEST(TreeBounds, Float64TreesHaveTheirOwnLineInRuleThree) {
  ResultsDocument doc = trees_with_bounds();
  for (const char* name : {"cpu.tree.f64[theta=0.5]", "gpu.tree.f64[theta=0.5]"}) {
    const DeviceKind device = name[0] == 'g' ? DeviceKind::gpu : DeviceKind::cpu;
    ImplementationRecord impl =
        testing::tree_test_implementation(name, device, Role::optimized, 0.5);
    impl.precision = Precision::f64;
    doc.implementations.push_back(impl);
    ResultRecord r =
        testing::tree_measured(name, 4096, device == DeviceKind::gpu ? 1e-3 : 4e-3, 1e-4, 1e-3);
    r.input_hash = "f64hash";
    r.tree_work->costs = testing::tree_test_costs(device);
    r.tree_work->costs->build_bytes = 100.0 * 4096;
    if (device == DeviceKind::gpu) {
      r.tree_work->costs->walk_ceiling = kGpuFp64FlopsCeiling;
      r.tree_work->costs->walk_scale = 0.5;
    } else {
      r.tree_work->costs->walk_ceiling = cpu_flops_ceiling(Precision::f64, "avx512f", true);
    }
    doc.results.push_back(r);
  }
  doc.ceilings->entries.push_back(
      {.name = kGpuFp64FlopsCeiling, .device = DeviceKind::gpu, .value = 4e9, .unit = "FLOP/s"});
  // The CPU's float64 walk at 200 × 4096 / (2e9 × 3.2e-3) = 13%, the GPU's at 200 × 4096 /
  // (4e9 × 0.5 × 0.8e-3) = 51%.
  doc.ceilings->entries.push_back({.name = cpu_flops_ceiling(Precision::f64, "avx512f", true),
                                   .device = DeviceKind::cpu,
                                   .value = 3.2e10,
                                   .unit = "FLOP/s",
                                   .threads = 16,
                                   .fp_instructions_per_second = 2e9});
  const Analysis both = analyze(doc);
  EXPECT_TRUE(has(rule(both, 3).evidence,
                  "f64 at N = 4096: cpu.tree.f64[theta=0.5] at 13% (walk) and 5% (build) of its "
                  "bounds against gpu.tree.f64[theta=0.5] at 51% (walk) and 0% (build) of its "
                  "bounds; the CPU's tree is 4.0× further from its walk's bound than the GPU's "
                  "(over 1.5×), so the ratio at equal accuracy may overstate the GPU"))
      << rule(both, 3).evidence;
  EXPECT_TRUE(has(rule(both, 3).evidence, "f32 at N = 65536: ")) << rule(both, 3).evidence;
  // Without the CPU's float64 ceiling it cannot tell, and says why.
  doc.ceilings->entries.pop_back();
  const Analysis unrated = analyze(doc);
  EXPECT_TRUE(has(rule(unrated, 3).evidence,
                  "f64 at N = 4096: for trees it cannot tell: cpu.tree.f64[theta=0.5] has no "
                  "fraction of its walk's bound (no cpu.fp64_flops.avx512f.all_cores among the "
                  "run's ceilings)"))
      << rule(unrated, 3).evidence;
}

// The reports branch on the document's kind, read from the command results.json keeps.
TEST(DocumentKind, ReadsTheCommandString) {
  RunSettings settings;
  EXPECT_EQ(kind_of(settings), DocumentKind::other);
  settings.command = "run";
  EXPECT_EQ(kind_of(settings), DocumentKind::run);
  settings.command = "validate";
  EXPECT_EQ(kind_of(settings), DocumentKind::validate);
  settings.command = "simulate";
  EXPECT_EQ(kind_of(settings), DocumentKind::simulate);
  settings.command = "list";
  EXPECT_EQ(kind_of(settings), DocumentKind::other);
}

// ---- the answer first: the suite's question answered in the first paragraph ----

// A committed sample's results (docs/samples).
ResultsDocument sample(const std::string& folder) {
  return load_results(std::filesystem::path(NBODY_SOURCE_DIR) / "docs" / "samples" / folder /
                      "results.json");
}

ResultsDocument run_document() {
  ResultsDocument doc = document();
  doc.settings.command = "run";
  return doc;
}

void skip(ResultsDocument& doc, const std::string& name, const std::string& reason) {
  for (ResultRecord& r : doc.results) {
    if (r.implementation != name) continue;
    r.status = Status::skipped;
    r.reason = reason;
    r.kernel.reset();
    r.kernel_rate.reset();
    r.accuracy.reset();
  }
}

// Best against best over two sizes: the lowest and the highest ratio, each with its N and its
// interval; naive against naive at the one N both measured.
TEST(Answer, RangesHoldTheirIntervalsAndTheSizesTheyHoldAt) {
  ResultsDocument doc = run_document();
  doc.results.push_back(measured("cpu.tbb", 4096, 4e10, 16, "avx512f"));
  doc.results.push_back(measured("gpu.tuned", 4096, 1e12));
  const Analysis a = analyze(doc);
  ASSERT_EQ(a.answer.best.size(), 1u);
  const RatioRange& best = a.answer.best.front();
  ASSERT_TRUE(best.lowest && best.highest);
  EXPECT_EQ(best.lowest->n, 4096u);
  EXPECT_DOUBLE_EQ(best.lowest->ratio.value, 25);
  EXPECT_EQ(best.highest->n, 1024u);
  EXPECT_DOUBLE_EQ(best.highest->ratio.value, 50);
  EXPECT_NEAR(best.highest->ratio.low, 50 * 0.9 / 1.1, 1e-9);
  ASSERT_EQ(a.answer.naive.size(), 1u);
  ASSERT_TRUE(a.answer.naive.front().lowest);
  EXPECT_EQ(a.answer.naive.front().lowest->n, 1024u);
  EXPECT_EQ(a.answer.naive.front().highest->n, 1024u);
  // No tree ran: the part across algorithms says so instead of a number.
  EXPECT_FALSE(a.answer.equal_accuracy.row);
  EXPECT_TRUE(has(a.answer.equal_accuracy.not_at_wanted, "no tree formulation ran"));
  // The terminal's summary opens with it, plain.
  EXPECT_TRUE(render_summary(doc, a).starts_with(
      "On this machine, best against best the GPU is faster by 25× (20.5–30.6) at N = 4K to 50× "
      "(40.9–61.1) at 1K (float32); naive against naive 100× (81.8–122) at N = 1K "
      "(float32); across algorithms at equal accuracy: no ratio (no tree formulation ran"))
      << render_summary(doc, a);
}

// A part without a figure says which and why in a few words, never an empty number.
TEST(Answer, AMissingPartSaysWhichAndWhy) {
  ResultsDocument doc = run_document();
  skip(doc, "gpu.aos",
       "left out by the plan: about 3 s where 0 s of the --budget of 150 s were left");
  ImplementationRecord cpu_f64 = implementation("cpu.tbb.f64", DeviceKind::cpu, Role::optimized);
  cpu_f64.precision = Precision::f64;
  ImplementationRecord gpu_f64 = implementation("gpu.tuned.f64", DeviceKind::gpu, Role::optimized);
  gpu_f64.precision = Precision::f64;
  doc.implementations.push_back(cpu_f64);
  doc.implementations.push_back(gpu_f64);
  doc.results.push_back(measured("cpu.tbb.f64", 1024, 1e10, 16, "avx512f"));
  doc.results.push_back(measured("gpu.tuned.f64", 1024, 1e11));
  skip(doc, "gpu.tuned.f64", "one evaluation would take about 5 s, over --max-eval-seconds 2");
  const Analysis a = analyze(doc);
  ASSERT_EQ(a.answer.best.size(), 2u);
  EXPECT_TRUE(a.answer.best[0].lowest);
  EXPECT_FALSE(a.answer.best[1].lowest);
  EXPECT_EQ(a.answer.best[1].missing,
            "the GPU measured no float64 formulation; gpu.tuned.f64: one evaluation would take "
            "about 5 s, over --max-eval-seconds 2");
  ASSERT_EQ(a.answer.naive.size(), 2u);
  EXPECT_EQ(a.answer.naive[0].missing,
            "the GPU's naive baseline gpu.aos was not measured: left out by the plan");
  EXPECT_EQ(a.answer.naive[1].missing, "no naive baseline in this run");
  const std::string summary = render_summary(doc, a);
  EXPECT_TRUE(has(summary, "(float32); float64: no ratio (the GPU measured no float64")) << summary;
  EXPECT_TRUE(has(summary, "naive against naive, float32: no ratio (the GPU's naive baseline"))
      << summary;
  EXPECT_FALSE(has(summary, "nan")) << summary;
  EXPECT_FALSE(has(summary, "(0–0)")) << summary;
}

// The tree-codes sample measured trees and all-pairs at 1M on both sides: the answer's last part
// is the ratio at relative L2 <= 1e-3 there. Without the CPU's 1M, it says why and falls back to
// the largest N that has a pair.
TEST(Answer, AtEqualAccuracyAt1MOrTheLargestNThatHasAPairSayingWhy) {
  const ResultsDocument trees = sample("tree-codes");
  const Analysis a = analyze(trees);
  const EqualAccuracyAnswer& at_1m = a.answer.equal_accuracy;
  ASSERT_TRUE(at_1m.row);
  EXPECT_EQ(at_1m.row->n, std::size_t{1} << 20);
  EXPECT_TRUE(at_1m.not_at_wanted.empty()) << at_1m.not_at_wanted;
  EXPECT_EQ(at_1m.bar_label, "relative L2 ≤ 1e-3");
  ASSERT_TRUE(at_1m.row->cpu && at_1m.row->gpu && at_1m.row->gpu_over_cpu);
  EXPECT_LE(at_1m.row->cpu->relative_l2, 1e-3);
  EXPECT_LE(at_1m.row->gpu->relative_l2, 1e-3);
  EXPECT_TRUE(has(render_summary(trees, a), "at relative L2 ≤ 1e-3 at N = 1M, the GPU is "));

  ResultsDocument no_cpu_at_1m = trees;
  std::erase_if(no_cpu_at_1m.results, [](const ResultRecord& r) {
    return r.implementation.starts_with("cpu.") && r.n == (std::size_t{1} << 20);
  });
  const EqualAccuracyAnswer fallback = analyze(no_cpu_at_1m).answer.equal_accuracy;
  ASSERT_TRUE(fallback.row);
  EXPECT_EQ(fallback.row->n, 262144u);
  EXPECT_EQ(fallback.not_at_wanted, "nothing measured at 1M on the CPU");
  const std::string summary = render_summary(no_cpu_at_1m);
  EXPECT_TRUE(has(summary, "not at N = 1M (nothing measured at 1M on the CPU) but at N = 256K"))
      << summary;
}

// A run of one side says first why there is no ratio, then what it has: its best rates, and
// where its tree overtakes all-pairs.
TEST(Answer, ARunOfOneSideSaysWhatItHas) {
  const ResultsDocument cpu_only = sample("cpu-only-run");
  const Analysis a = analyze(cpu_only);
  ASSERT_FALSE(a.sides.compares());
  EXPECT_TRUE(a.answer.best.empty());
  ASSERT_TRUE(a.answer.one_side);
  EXPECT_EQ(a.answer.one_side->device, DeviceKind::cpu);
  ASSERT_EQ(a.answer.one_side->best.size(), 2u);
  EXPECT_EQ(a.answer.one_side->best[0].precision, Precision::f32);
  EXPECT_EQ(a.answer.one_side->best[1].precision, Precision::f64);
  const std::string summary = render_summary(cpu_only, a);
  EXPECT_TRUE(summary.starts_with("No GPU/CPU ratio from this run")) << summary;
  EXPECT_LT(summary.find("No GPU/CPU ratio"),
            summary.find("What this run has: the CPU's best rates, "))
      << summary;

  ResultsDocument cpu_trees = sample("tree-codes");
  std::erase_if(cpu_trees.results,
                [](const ResultRecord& r) { return r.implementation.starts_with("gpu."); });
  const Analysis trees = analyze(cpu_trees);
  ASSERT_TRUE(trees.answer.one_side && trees.answer.one_side->crossover);
  EXPECT_TRUE(has(render_summary(cpu_trees, trees),
                  "the CPU's tree overtakes all-pairs at "
                  "relative L2 ≤ 1e-3 from N = "))
      << render_summary(cpu_trees, trees);
}

// GitHub's anchor of a Markdown heading: lowercased, punctuation dropped, spaces as hyphens.
std::string anchor_of(const std::string& heading) {
  std::string anchor = "#";
  for (const char c : heading) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
      anchor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (c == ' ') {
      anchor += '-';
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      anchor += c;  // GitHub keeps letters beyond ASCII
    }
  }
  return anchor;
}

// report.md opens with the answer, each figure a link that resolves to a heading of the page,
// and its headline gives the ratio at equal accuracy at 1M.
TEST(Answer, ReportMdOpensWithItsLinksResolving) {
  const ResultsDocument trees = sample("tree-codes");
  const std::string md = markdown_of(trees);
  const std::string first =
      md.substr(md.find("\n\n") + 2, md.find("\n\n", md.find("\n\n") + 2) - md.find("\n\n") - 2);
  EXPECT_TRUE(first.starts_with("On this machine, best against best the GPU is faster by ["))
      << first;
  std::set<std::string> anchors;
  for (std::size_t at = md.find("\n## "); at != std::string::npos; at = md.find("\n## ", at + 1)) {
    anchors.insert(anchor_of(md.substr(at + 4, md.find('\n', at + 1) - at - 4)));
  }
  int links = 0;
  for (std::size_t at = md.find("](#"); at != std::string::npos; at = md.find("](#", at + 1)) {
    const std::string target = md.substr(at + 2, md.find(')', at) - at - 2);
    EXPECT_TRUE(anchors.contains(target)) << target;
    ++links;
  }
  EXPECT_GE(links, 4);
  const std::size_t headline = md.find("## Headline");
  const std::size_t line = md.find("**At equal accuracy at N = 1M (relative L2 ≤ 1e-3", headline);
  EXPECT_LT(line, md.find("## Across algorithms")) << md;
  EXPECT_FALSE(has(md, "GPU GPU"));
  EXPECT_FALSE(has(md, "CPU CPU"));
}

// A report combined from two hosts has no one plan: it says nothing of one (each side's command
// line, in its first lines, says how that side was planned).
TEST(Answer, ACombinedReportSaysNothingOfAPlanItDoesNotHave) {
  const ResultsDocument both = combine_sides({sample("cpu-only-run"), "cpu-only-run/"},
                                             {sample("gpu-host-run"), "gpu-host-run/"});
  const Analysis a = analyze(both);
  EXPECT_FALSE(has(markdown_of(both), "Planned within")) << markdown_of(both);
  EXPECT_FALSE(has(render_summary(both, a), "Planned within"));
  EXPECT_TRUE(render_summary(both, a).starts_with("With each side measured on its own machine, "))
      << render_summary(both, a);
}

// The plan's sentence keeps its estimate beside what the measurements took: the estimate of what
// ran where the document gives it.
TEST(Answer, ThePlanSentenceSetsTheEstimateBesideWhatItTook) {
  ResultsDocument doc = run_document();
  doc.settings.budget_s = 75;
  doc.phase_seconds = {{"planned", 72.3}, {"measurements", 58.2}};
  EXPECT_TRUE(
      has(render_summary(doc), "Planned within a budget of 75 s: estimated 72 s, took 58 s"))
      << render_summary(doc);
  // With the estimate of what ran, what the measurements took without the probes, and the
  // timings taken again (which no estimate of a quiet machine foresees) counted.
  doc.phase_seconds["planned_ran"] = 60.4;
  doc.phase_seconds["planning"] = 3.1;
  doc.phase_seconds["ceilings"] = 7.4;
  EXPECT_TRUE(has(render_summary(doc),
                  "Planned within a budget of 75 s, the ceilings (7 s) and the probes (3 s) "
                  "included: the measurements that ran were estimated at 60 s and took 55 s"))
      << render_summary(doc);
  EXPECT_FALSE(has(render_summary(doc), "taken again"));
  for (ResultRecord& r : doc.results) {
    if (r.kernel && r.kernel->conditions) r.kernel->conditions->attempts = 3;
  }
  EXPECT_TRUE(has(render_summary(doc), "disturbed and taken again)")) << render_summary(doc);
  doc.phase_seconds.clear();
  EXPECT_FALSE(has(render_summary(doc), "Planned"));
}

}  // namespace
}  // namespace nbody::reports
