#include "nbody/sizes.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "nbody/errors.hpp"

namespace nbody {
namespace {

std::size_t parse_one(std::string item) {
  while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
  while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.erase(0, 1);
  std::size_t multiplier = 1;
  std::string digits = item;
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) {
    multiplier = 1024;
    digits.pop_back();
  } else if (!digits.empty() && (digits.back() == 'M' || digits.back() == 'm')) {
    multiplier = 1024 * 1024;
    digits.pop_back();
  }
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc{} || end != digits.data() + digits.size()) {
    throw UsageError(
        fmt::format("invalid size '{}': expected a whole number of bodies >= 1", item));
  }
  if (value == 0) throw UsageError(fmt::format("invalid size '{}': N must be at least 1", item));
  if (value > kMaxBodies / multiplier) {
    throw UsageError(fmt::format("invalid size '{}': N may be at most {}", item, kMaxBodies));
  }
  return value * multiplier;
}

}  // namespace

std::vector<std::size_t> parse_sizes(const std::vector<std::string>& items) {
  std::vector<std::size_t> sizes;
  for (const std::string& item : items) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = item.find(',', start);
      const std::string one = item.substr(start, comma - start);
      if (one.find_first_not_of(" \t") == std::string::npos) {
        throw UsageError(fmt::format("an empty item in '{}'", item));
      }
      const std::size_t n = parse_one(one);
      // One N twice would be measured twice and reported as two rows of one measurement.
      if (std::find(sizes.begin(), sizes.end(), n) != sizes.end()) {
        throw UsageError(fmt::format("N = {} given twice", n));
      }
      sizes.push_back(n);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (sizes.empty()) throw UsageError("no sizes given");
  return sizes;
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  return parse_sizes(std::vector<std::string>{text});
}

std::string format_size(std::size_t n) {
  if (n >= 1024 * 1024 && n % (1024 * 1024) == 0) return fmt::format("{}M", n / (1024 * 1024));
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{}K", n / 1024);
  return fmt::format("{}", n);
}

}  // namespace nbody
