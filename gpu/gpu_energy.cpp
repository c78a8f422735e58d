#include "nbody/gpu/gpu_energy.hpp"

#include <fmt/format.h>

#include "nvml_library.hpp"

namespace nbody::gpu {

#if defined(NBODY_HAVE_NVML_HEADER)
namespace {

class NvmlEnergyMeter final : public EnergyMeter {
 public:
  struct Board {
    int ordinal = 0;
    nvmlDevice_t device{};
    unsigned long long first_mj = 0;
  };

  NvmlEnergyMeter(std::shared_ptr<Nvml> nvml, std::vector<Board> boards)
      : nvml_(std::move(nvml)), boards_(std::move(boards)) {}

  std::string source() const override { return "nvml"; }

  std::vector<std::string> domains() const override {
    std::vector<std::string> names;
    for (const Board& b : boards_) names.push_back(fmt::format("GPU {} board", b.ordinal));
    return names;
  }

  std::vector<double> joules() override {
    std::vector<double> reading;
    for (const Board& b : boards_) {
      unsigned long long mj = 0;
      if (const nvmlReturn_t status = nvml_->total_energy_mj(b.device, mj);
          status != NVML_SUCCESS) {
        throw EnergyReadError(fmt::format("NVML could not read GPU {}'s energy: {}", b.ordinal,
                                          nvml_->error_string(status)));
      }
      reading.push_back(1e-3 * static_cast<double>(mj - b.first_mj));
    }
    return reading;
  }

  double unit_j() const override { return 1e-3; }

  std::optional<double> limit_watts() const override {
    double sum = 0;
    for (const Board& b : boards_) {
      const std::optional<double> limit = nvml_->power_limit_watts(b.device);
      if (!limit) return std::nullopt;
      sum += *limit;
    }
    return sum;
  }

 private:
  std::shared_ptr<Nvml> nvml_;
  std::vector<Board> boards_;
};

}  // namespace

std::unique_ptr<EnergyMeter> make_gpu_energy_meter(const std::vector<int>& ordinals,
                                                   std::string& why_not) {
  const std::shared_ptr<Nvml> nvml = Nvml::open(why_not);
  if (!nvml) return nullptr;
  if (!nvml->reads_energy()) {
    why_not = "NVML has no total-energy counter (driver too old?)";
    return nullptr;
  }
  std::vector<NvmlEnergyMeter::Board> boards;
  for (const int ordinal : ordinals) {
    const std::optional<nvmlDevice_t> device = nvml->device(ordinal, why_not);
    if (!device) return nullptr;
    NvmlEnergyMeter::Board board{.ordinal = ordinal, .device = *device, .first_mj = 0};
    if (const nvmlReturn_t status = nvml->total_energy_mj(*device, board.first_mj);
        status != NVML_SUCCESS) {
      why_not = fmt::format("NVML does not read GPU {}'s energy: {}", ordinal,
                            nvml->error_string(status));
      return nullptr;
    }
    boards.push_back(board);
  }
  return std::make_unique<NvmlEnergyMeter>(nvml, std::move(boards));
}

#else

std::unique_ptr<EnergyMeter> make_gpu_energy_meter(const std::vector<int>&, std::string& why_not) {
  why_not =
      "this build has no NVML: nvml.h was not found beside the CUDA toolkit at configure time";
  return nullptr;
}

#endif

}  // namespace nbody::gpu
