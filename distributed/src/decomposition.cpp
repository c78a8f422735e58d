#include "nbody/distributed/decomposition.hpp"

#include <cstdio>
#include <limits>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace nbody::distributed {

Decomposition::Decomposition(Communicator& communicator, std::atomic<bool>& signal_received,
                             std::atomic<bool>& interrupt_requested)
    : communicator_(communicator),
      signal_received_(signal_received),
      interrupt_requested_(interrupt_requested),
      host_(communicator.host_ranks()) {}

TargetRange Decomposition::slice(std::size_t n) const {
  return balanced_slice(n, rank(), ranks());
}

std::vector<TargetRange> Decomposition::slices(std::size_t n) const {
  std::vector<TargetRange> all;
  for (int r = 0; r < ranks(); ++r) all.push_back(balanced_slice(n, r, ranks()));
  return all;
}

namespace {

// A failure's message, and whether it is bad input (a UsageError).
std::pair<std::string, bool> describe(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const UsageError& e) {
    return {e.what(), true};
  } catch (const std::exception& e) {
    return {e.what(), false};
  } catch (...) {
    return {"an exception that is not a std::exception", false};
  }
}

}  // namespace

Decomposition::Figures Decomposition::agree(AgreementPoint point, const std::exception_ptr& failure,
                                            const Figures& figures) {
  return agree(point, failure, figures, std::nullopt);
}

void Decomposition::agree_or_end_job(AgreementPoint point, const std::exception_ptr& failure,
                                     double patience_s) {
  agree(point, failure, {}, patience_s);
}

Decomposition::Figures Decomposition::agree(AgreementPoint point, const std::exception_ptr& failure,
                                            const Figures& figures,
                                            const std::optional<double>& patience_s) {
  // One reduction (the largest of each entry): the point and its negative (the smallest point),
  // the lowest failing rank (its distance from the last rank, doubled, plus 1 for bad input),
  // whether any rank received a signal, then the figures.
  constexpr std::size_t kPoint = 0, kNegativePoint = 1, kFailure = 2, kSignal = 3, kHeader = 4;
  std::array<double, kHeader + kFigures> entries{};
  entries[kPoint] = static_cast<double>(point);
  entries[kNegativePoint] = -static_cast<double>(point);
  std::string message;
  bool usage = false;
  if (failure) {
    std::tie(message, usage) = describe(failure);
    entries[kFailure] = 2.0 * (ranks() - rank()) + (usage ? 1 : 0);
  }
  entries[kSignal] = signal_received_.load() ? 1 : 0;
  for (std::size_t i = 0; i < kFigures; ++i) entries[kHeader + i] = figures[i];
  if (patience_s) {
    // Every rank reduces alike (non-blocking); the one that failed waits only so long.
    const double patience = failure ? *patience_s : std::numeric_limits<double>::infinity();
    if (!communicator_.max_in_place_within(entries, patience)) {
      fmt::print(stderr,
                 "nbody-fair: rank {}: {}{} (ending the job: the other ranks did not meet this "
                 "rank within {:g} s)\n",
                 rank(), usage ? "" : "error: ", message, *patience_s);
      std::fflush(stderr);
      communicator_.abort(usage ? 2 : 1);
    }
  } else {
    communicator_.max_in_place(entries);
  }

  if (entries[kPoint] != -entries[kNegativePoint]) {
    if (rank() == 0) {
      fmt::print(stderr,
                 "nbody-fair: the ranks went different ways (one at agreement point {}, another at "
                 "{}); ending the job\n",
                 -entries[kNegativePoint], entries[kPoint]);
      std::fflush(stderr);
    }
    communicator_.abort(1);
  }
  if (entries[kSignal] > 0) interrupt_requested_ = true;
  if (entries[kFailure] > 0) {
    const auto code = static_cast<int>(entries[kFailure]);
    const int failing = ranks() - code / 2;
    communicator_.broadcast(message, failing);
    const std::string text = failing == 0 ? message : fmt::format("rank {}: {}", failing, message);
    if (code % 2 == 1) throw AgreedUsageError(text);
    throw AgreedError(text);
  }
  Figures agreed{};
  for (std::size_t i = 0; i < kFigures; ++i) agreed[i] = entries[kHeader + i];
  return agreed;
}

void Decomposition::agree_on_start(const std::exception_ptr& failure,
                                   std::uint64_t arguments_hash) {
  started_ = true;
  // 52 bits: exact in a double.
  const auto hash = static_cast<double>(arguments_hash & ((std::uint64_t{1} << 52) - 1));
  const Figures agreed = agree(AgreementPoint::start, failure, {hash, -hash, 0, 0});
  if (agreed[0] != -agreed[1]) {
    throw AgreedUsageError(
        "the ranks were given different arguments: every rank must run the same command");
  }
}

std::optional<std::string> Decomposition::agree_on_reason(const std::optional<std::string>& local) {
  const double lowest = max_over_ranks(local ? static_cast<double>(ranks() - rank()) : 0.0);
  if (lowest == 0) return std::nullopt;
  const int giver = ranks() - static_cast<int>(lowest);
  std::string reason = local.value_or("");
  communicator_.broadcast(reason, giver);
  return giver == 0 ? reason : fmt::format("rank {}: {}", giver, reason);
}

void Decomposition::agree_asleep(AgreementPoint point) {
  agree(point, nullptr, {}, std::numeric_limits<double>::infinity());
}

std::vector<std::string> Decomposition::gather_strings(const std::string& text) {
  agree(AgreementPoint::decision);
  return communicator_.all_strings(text);
}

double Decomposition::max_over_ranks(double value) {
  return agree(AgreementPoint::decision, nullptr, {value, 0, 0, 0})[0];
}

double Decomposition::sum_on_host(double value) {
  agree(AgreementPoint::decision);
  std::array<double, 1> sum = {value};
  host_->sum_in_place(sum);
  return sum[0];
}

std::uint64_t arguments_hash(int argc, char** argv) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (int i = 1; i < argc; ++i) {
    for (const char* c = argv[i];; ++c) {  // each argument with its terminating zero
      hash = (hash ^ static_cast<unsigned char>(*c)) * 0x100000001b3ULL;
      if (*c == '\0') break;
    }
  }
  return hash;
}

}  // namespace nbody::distributed
