// The CPU tree walk's term instructions (each ISA's GroupTerms, cpu/tree/interactions_<id>.cpp)
// against the library this build made: objdump of libnbody_cpu.a, the innermost loops of each
// group kernel evaluate_group<T, Arch, ...> that hold a square root or rsqrt, counted by the
// all-pairs hot-loop census (nbody/cpu_peaks/loop_census.hpp). A kernel's loops are its body-body
// and body-cell terms, each for one, two or three batches of targets a pass; per batch every loop
// of one kind holds the same instructions, the body-body term the fewer. A change of the kernels,
// the flags or the compiler that moves them fails here, with the counts found.
#include <array>
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "nbody/cpu/tree/interaction_kernels.hpp"
#include "nbody/cpu_peaks/loop_census.hpp"
#include "nbody/isas.hpp"

namespace nbody::cpu::tree {
namespace {

// The output of a shell command, or empty where it failed.
std::string command_output(const std::string& command) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return out;
  std::array<char, 1 << 16> chunk{};
  std::size_t read = 0;
  while ((read = std::fread(chunk.data(), 1, chunk.size(), pipe.get())) > 0) {
    out.append(chunk.data(), read);
  }
  return pclose(pipe.release()) == 0 ? out : std::string();
}

// How the demangled name of a group kernel spells its xsimd architecture.
std::string xsimd_arch(std::string_view isa) {
  if (isa == "sse4.2") return "xsimd::sse4_2";
  if (isa == "avx2") return "xsimd::fma3<xsimd::avx2>";
  if (isa == "neon64") return "xsimd::neon64";
  return "xsimd::avx512f";
}

// The arithmetic instructions a term (one source against `lanes` targets) of every term loop of
// the group kernel of `isa` in `type`; empty where none was found.
std::multiset<double> term_loop_instructions(const std::vector<peaks::LoopCensus>& loops,
                                             std::string_view isa, const std::string& type,
                                             int lanes) {
  const std::string kernel = "evaluate_group<" + type + ", " + xsimd_arch(isa) + ",";
  std::multiset<double> found;
  for (const peaks::LoopCensus& loop : loops) {
    if (loop.interactions_per_iteration == 0 || loop.function.find(kernel) == std::string::npos) {
      continue;
    }
    const double batches = static_cast<double>(loop.interactions_per_iteration) / lanes;
    found.insert(loop.fp_instructions_per_iteration / batches);
  }
  return found;
}

TEST(TreeTermInstructions, AreThoseOfTheBuiltGroupKernels) {
#if defined(NBODY_SANITIZED_BUILD)
  GTEST_SKIP() << "a sanitized build's group kernels are not inlined as the optimized build's, "
                  "whose instructions each ISA's file counts";
#endif
  const std::string objdump = NBODY_OBJDUMP;
  if (command_output(objdump + " --version 2>/dev/null").empty()) {
    GTEST_SKIP() << objdump << " (binutils) is not installed: the built kernels cannot be counted";
  }
  const std::string disassembly = command_output(objdump + " -d -C --no-show-raw-insn -w '" +
                                                 NBODY_CPU_LIBRARY + "' 2>/dev/null");
  ASSERT_FALSE(disassembly.empty()) << objdump << " could not read " << NBODY_CPU_LIBRARY;
  const std::vector<peaks::LoopCensus> loops =
      peaks::innermost_loops(peaks::parse_objdump(disassembly));
  for (const IsaInfo& isa : compiled_isas()) {
    // Data, not code: read for every ISA, whether this CPU runs it or not.
    const GroupTerms& counted = group_terms_for(isa.isa);
    for (const auto& [type, terms] :
         {std::pair{"float", counted.f32}, std::pair{"double", counted.f64}}) {
      SCOPED_TRACE(std::string(isa.name) + " " + type);
      const std::multiset<double> found =
          term_loop_instructions(loops, isa.name, type, terms.lanes);
      // A body-body and a body-cell loop for each batch count (one, two and three a pass), and
      // any copy a compiler makes of one (GCC 12 unrolls some float32 ones by two).
      EXPECT_GE(found.size(), 6u);
      const std::set<double> distinct(found.begin(), found.end());
      EXPECT_EQ(distinct, (std::set<double>{static_cast<double>(terms.body_body),
                                            static_cast<double>(terms.body_cell)}))
          << "instructions a term in the built loops: "
          << ::testing::PrintToString(std::vector<double>(found.begin(), found.end()));
    }
  }
}

// The lookup the formulation prices its terms with names the kernels it runs.
TEST(TreeTermInstructions, AreLookedUpByTheIsaTheWalkRuns) {
  for (const IsaInfo& isa : compiled_isas()) {
    if (!isa_available(isa.isa)) continue;
    const TermInstructions f32 = term_instructions(isa.name, false);
    EXPECT_EQ(f32.lanes, isa.vector_bits / 32) << isa.name;
    EXPECT_EQ(term_instructions(isa.name, true).lanes, isa.vector_bits / 64) << isa.name;
  }
  // Empty: the widest this CPU has, at least 128 bits.
  EXPECT_GE(term_instructions("", false).lanes, 4);
}

}  // namespace
}  // namespace nbody::cpu::tree
