// --gpu-exchange under mpirun: the option's values, and the ranks NCCL would refuse.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/app/gpu_exchange.hpp"
#include "nbody/errors.hpp"

namespace nbody {
namespace {

// --gpu-exchange takes nccl or mpi; anything else is bad input naming the option.
TEST(GpuExchange, TakesNcclOrMpi) {
  EXPECT_EQ(parse_gpu_exchange("nccl"), GpuExchangeRequest::nccl);
  EXPECT_EQ(parse_gpu_exchange("mpi"), GpuExchangeRequest::mpi);
  for (const char* bad : {"", "NCCL", "auto", "nccl,mpi"}) {
    try {
      parse_gpu_exchange(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--gpu-exchange: '" + std::string(bad) +
                    "' is neither nccl (between the ranks' GPUs) nor mpi (through host memory)");
    }
  }
}

// NCCL refuses two ranks on one GPU: named up front, by rank and GPU (host and PCI bus id), before
// any rank waits inside NCCL; ranks without a GPU (empty) share nothing.
TEST(GpuExchange, TwoRanksOnOneGpuAreRefusedByName) {
  const std::vector<std::string> own = {"a/0000:01:00.0", "a/0000:02:00.0", "b/0000:01:00.0"};
  EXPECT_FALSE(shared_gpu_reason(own).has_value());
  EXPECT_FALSE(shared_gpu_reason(std::vector<std::string>{"", ""}).has_value());
  const std::vector<std::string> shared = {"a/0000:01:00.0", "b/0000:01:00.0", "a/0000:01:00.0"};
  EXPECT_EQ(shared_gpu_reason(shared).value_or(""),
            "ranks 0 and 2 would share one GPU (a/0000:01:00.0): NCCL takes one GPU per rank "
            "(start at most as many ranks on a host as it has GPUs)");
}

}  // namespace
}  // namespace nbody
