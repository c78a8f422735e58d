#pragma once
// For the GoogleTest programs run under mpirun: every rank runs every test, rank 0 prints as
// usual, and the other ranks print only their failures, each line naming its rank.
#include <cstdio>

#include <gtest/gtest.h>

namespace nbody::testing {

class RankFailurePrinter final : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "rank %d: %s:%d: failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
    std::fflush(stderr);
  }

 private:
  int rank_;
};

// Rank 0 keeps GoogleTest's printer; the others print their failures alone.
inline void print_failures_of_every_rank(int rank) {
  if (rank == 0) return;
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new RankFailurePrinter(rank));
}

}  // namespace nbody::testing
