#pragma once
// nlohmann::json 3.11 has no std::optional support: an absent value is written as null.
#include <optional>

#include <nlohmann/json.hpp>

namespace nlohmann {

template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    if (value) {
      j = *value;
    } else {
      j = nullptr;
    }
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null()) {
      value.reset();
    } else {
      value = j.get<T>();
    }
  }
};

}  // namespace nlohmann
