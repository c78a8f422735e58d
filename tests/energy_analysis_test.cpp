// What the reports make of energy (FAIRNESS.md rule 10), on the hand-made run of
// tests/data/results-schema-10-energy-hand-made.json (energy on both sides): joules per
// evaluation beside each figure, GPU/CPU energy ratios only where both sides were read in one run
// and both figures are resolved, and the audit's rule 10.
#include <string>

#include <gtest/gtest.h>

#include "energy_documents.hpp"

#include "nbody/reports/analysis.hpp"
#include "nbody/reports/comparison.hpp"
#include "nbody/reports/comparison_report.hpp"
#include "nbody/results.hpp"

namespace nbody {
namespace {

using reports::Analysis;
using reports::analyze;
using reports::RuleVerdict;

const reports::AuditRule& rule_10(const Analysis& a) {
  for (const reports::AuditRule& rule : a.audit.rules) {
    if (rule.number == 10) return rule;
  }
  throw std::runtime_error("no rule 10");
}

TEST(EnergyAnalysis, BothSidesReadGiveRatiosWithIntervals) {
  const Analysis a = analyze(energy_run());
  ASSERT_TRUE(a.energy.compares()) << a.energy.no_ratio_reason;
  ASSERT_EQ(a.energy.devices.size(), 2u);
  std::size_t ratios = 0;
  for (const reports::HeadlineRow& row : a.headline.rows) {
    if (!row.best_energy_ratio) continue;
    ++ratios;
    ASSERT_TRUE(row.best_cpu->energy && row.best_gpu->energy);
    const double expected =
        row.best_cpu->energy->joules_per_evaluation / row.best_gpu->energy->joules_per_evaluation;
    EXPECT_DOUBLE_EQ(row.best_energy_ratio->value, expected);
    EXPECT_LE(row.best_energy_ratio->low, expected);
    EXPECT_GE(row.best_energy_ratio->high, expected);
    ASSERT_TRUE(row.best_gpu->energy->interactions_per_joule.has_value());
    EXPECT_NEAR(*row.best_gpu->energy->interactions_per_joule,
                static_cast<double>(row.n) * static_cast<double>(row.n) /
                    row.best_gpu->energy->joules_per_evaluation,
                1e-6 * *row.best_gpu->energy->interactions_per_joule);
  }
  EXPECT_GT(ratios, 0u);
  bool bar_ratio = false;
  for (const reports::BarHeadlineRow& row : a.algorithms.rows)
    bar_ratio |= row.energy_ratio.has_value();
  EXPECT_TRUE(bar_ratio) << "the equal-accuracy rows set their energy ratio";
  EXPECT_EQ(rule_10(a).verdict, RuleVerdict::kept) << rule_10(a).evidence;
  EXPECT_NE(rule_10(a).evidence.find("included"), std::string::npos);
}

// An unresolved figure stands in no ratio.
TEST(EnergyAnalysis, UnresolvedFiguresFormNoRatio) {
  ResultsDocument doc = energy_run();
  for (ResultRecord& r : doc.results) {
    if (r.kernel && r.kernel->energy) r.kernel->energy->resolved = false;
  }
  const Analysis a = analyze(doc);
  for (const reports::HeadlineRow& row : a.headline.rows) {
    EXPECT_FALSE(row.best_energy_ratio.has_value());
    EXPECT_FALSE(row.naive_energy_ratio.has_value());
  }
  EXPECT_NE(rule_10(a).evidence.find("unresolved"), std::string::npos) << rule_10(a).evidence;
}

// A side whose energy is not read: no ratio anywhere, the reason in one line, the rule kept by
// saying so.
TEST(EnergyAnalysis, ASideNotReadFormsNoRatioAndSaysWhy) {
  ResultsDocument doc = energy_run();
  for (EnergyMeterRecord& m : doc.energy) {
    if (m.device != DeviceKind::cpu) continue;
    m = EnergyMeterRecord{
        .device = DeviceKind::cpu,
        .unavailable_reason = "no /sys/class/powercap, and the perf power PMU has no energy-pkg"};
  }
  const Analysis a = analyze(doc);
  EXPECT_FALSE(a.energy.compares());
  EXPECT_NE(a.energy.no_ratio_reason.find("the CPU's energy is not read: no /sys/class/powercap"),
            std::string::npos)
      << a.energy.no_ratio_reason;
  for (const reports::HeadlineRow& row : a.headline.rows) {
    EXPECT_FALSE(row.best_energy_ratio.has_value());
  }
  EXPECT_EQ(rule_10(a).verdict, RuleVerdict::kept);
  EXPECT_NE(rule_10(a).evidence.find("no energy ratio is formed"), std::string::npos);
}

// The answer's energy line is chosen in the analysis: per precision, the headline row of the
// largest N with a best energy ratio, which the printers only format.
TEST(EnergyAnalysis, TheAnswerQuotesTheLargestSizeOfEachPrecisionWithARatio) {
  const Analysis a = analyze(energy_run());
  ASSERT_TRUE(a.answer.energy.has_value());
  const reports::EnergyAnswer& e = *a.answer.energy;
  EXPECT_TRUE(e.missing.empty()) << e.missing;
  EXPECT_EQ(e.idle_accounting, "included");
  ASSERT_EQ(e.best.size(), 2u);
  EXPECT_EQ(e.best[0].precision, Precision::f32);
  EXPECT_EQ(e.best[1].precision, Precision::f64);
  for (const reports::EnergyAnswer::Quoted& quoted : e.best) {
    const reports::HeadlineRow* largest = nullptr;
    for (const reports::HeadlineRow& row : a.headline.rows) {
      if (row.precision == quoted.precision && row.best_energy_ratio) largest = &row;
    }
    ASSERT_NE(largest, nullptr);
    EXPECT_EQ(quoted.n, largest->n);
    EXPECT_DOUBLE_EQ(quoted.ratio.value, largest->best_energy_ratio->value);
    EXPECT_DOUBLE_EQ(quoted.ratio.low, largest->best_energy_ratio->low);
    EXPECT_DOUBLE_EQ(quoted.ratio.high, largest->best_energy_ratio->high);
  }
}

// Without a ratio the answer holds why: the run's reason where the sides do not compare, else that
// no N has two resolved best figures.
TEST(EnergyAnalysis, TheAnswerSaysWhyItQuotesNoRatio) {
  const Analysis without_cpu = analyze(energy_run_without_cpu_energy());
  ASSERT_TRUE(without_cpu.answer.energy.has_value());
  EXPECT_TRUE(without_cpu.answer.energy->best.empty());
  EXPECT_EQ(without_cpu.answer.energy->missing, without_cpu.energy.no_ratio_reason);

  ResultsDocument doc = energy_run();
  for (ResultRecord& r : doc.results) {
    if (r.kernel && r.kernel->energy) r.kernel->energy->resolved = false;
  }
  const Analysis unresolved = analyze(doc);
  ASSERT_TRUE(unresolved.answer.energy.has_value());
  EXPECT_TRUE(unresolved.answer.energy->best.empty());
  EXPECT_EQ(unresolved.answer.energy->missing,
            "no N where both sides' best figures have a resolved energy reading");
}

// Each tree row carries its own energy, the figure the Energy section charts for it.
TEST(EnergyAnalysis, EachTreeRowCarriesItsEnergy) {
  const Analysis a = analyze(energy_run());
  std::size_t with_energy = 0;
  for (const reports::TreeRow& t : a.algorithms.trees) {
    const reports::EnergyPoint* point = nullptr;
    for (const reports::EnergyPoint& p : a.energy.points) {
      if (p.implementation == t.implementation && p.n == t.n) point = &p;
    }
    ASSERT_EQ(t.energy.has_value(), point != nullptr) << t.implementation << " at " << t.n;
    if (!point) continue;
    ++with_energy;
    EXPECT_DOUBLE_EQ(t.energy->joules_per_evaluation, point->energy.joules_per_evaluation);
    EXPECT_EQ(t.energy->resolved, point->energy.resolved);
    EXPECT_FALSE(t.energy->interactions_per_joule.has_value()) << "a tree is credited none";
  }
  EXPECT_GT(with_energy, 0u);
}

// Energy is compared within one run: a report combined from two runs forms no ratio.
TEST(EnergyAnalysis, TwoRunsFormNoRatio) {
  ResultsDocument doc = energy_run();
  doc.sides_from = {SideSource{.device = DeviceKind::cpu}, SideSource{.device = DeviceKind::gpu}};
  const Analysis a = analyze(doc);
  EXPECT_FALSE(a.energy.compares());
  EXPECT_NE(a.energy.no_ratio_reason.find("within one run"), std::string::npos);
}

// The CPU side without DRAM counts its packages alone, against a whole GPU board: the audit cannot
// tell the accounting is the same.
TEST(EnergyAnalysis, CpuWithoutDramCannotTellTheAccountingIsTheSame) {
  ResultsDocument doc = energy_run();
  for (EnergyMeterRecord& m : doc.energy) {
    if (m.device == DeviceKind::cpu) m.domains = {"package-0"};
  }
  const Analysis a = analyze(doc);
  EXPECT_EQ(rule_10(a).verdict, RuleVerdict::cannot_tell) << rule_10(a).evidence;
  EXPECT_NE(rule_10(a).evidence.find("DRAM"), std::string::npos);
}

// Files older than version 10 recorded no energy: rule 10 does not apply, and nothing else moves.
TEST(EnergyAnalysis, OlderFilesHaveNoEnergyAndRuleTenDoesNotApply) {
  ResultsDocument doc = energy_run();
  doc.energy.clear();
  for (ResultRecord& r : doc.results) {
    if (r.kernel) r.kernel->energy.reset();
    if (r.end_to_end) r.end_to_end->energy.reset();
  }
  const Analysis a = analyze(doc);
  EXPECT_EQ(rule_10(a).verdict, RuleVerdict::not_applicable);
  EXPECT_FALSE(a.energy.any_read());
}

// compare lists energy that moved beyond the threshold and never fails on it: the same run with one
// formulation's joules up by a fifth (its time unchanged) is no regression.
TEST(EnergyAnalysis, CompareListsEnergyChangesAndNeverFailsOnThem) {
  const ResultsDocument base = energy_run();
  ResultsDocument now = base;
  std::string changed;
  for (ResultRecord& r : now.results) {
    if (r.implementation != "gpu.tuned" || !r.kernel || !r.kernel->energy) continue;
    r.kernel->energy->per_evaluation_j *= 1.2;
    changed = r.implementation;
  }
  ASSERT_FALSE(changed.empty());
  const reports::Comparison c = reports::compare_results(base, now);
  EXPECT_FALSE(c.regressed());
  std::size_t listed = 0;
  for (const reports::ComparedRow& row : c.rows) {
    if (!row.energy_changed) continue;
    ++listed;
    EXPECT_EQ(row.implementation, "gpu.tuned");
    EXPECT_NEAR(*row.energy_ratio, 1.2, 1e-9);
  }
  EXPECT_GT(listed, 0u);
  const std::string md = reports::render_comparison_markdown(c, {"a", "b"});
  EXPECT_NE(md.find("Energy (listed, never failed)"), std::string::npos) << md;
  EXPECT_NE(md.find("1.200×"), std::string::npos);
  EXPECT_NE(md.find("No regression."), std::string::npos);
}

}  // namespace
}  // namespace nbody
