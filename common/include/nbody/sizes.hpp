#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace nbody {

// Parses a list of body counts: "1000,4096", "1K,64K,1M" (binary suffixes), in any order.
// Throws UsageError for anything that is not a whole number >= 1 (or is out of range).
std::vector<std::size_t> parse_sizes(const std::string& text);
std::vector<std::size_t> parse_sizes(const std::vector<std::string>& items);

// "1K" for 1024, "1M" for 1048576, else the plain number.
std::string format_size(std::size_t n);

// The largest N any formulation accepts (32-bit body indices on every device).
inline constexpr std::size_t kMaxBodies = (std::size_t{1} << 31) - 1;

}  // namespace nbody
