#include "nbody/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "nbody/errors.hpp"

namespace nbody {
namespace {

using nlohmann::json;

constexpr std::uint64_t kLargestSigned = std::numeric_limits<std::int64_t>::max();

// valijson reads every integer, the schema's and the document's, as int64: an unsigned one above
// 2^63 - 1 (a uint64 field's bound, or a seed) would read as negative.
bool beyond_int64(const json& value) {
  return value.is_number_unsigned() && value.get<std::uint64_t>() > kLargestSigned;
}

// The schema as valijson is given it: bounds above 2^63 - 1 as doubles. 2^64 - 1, the bound of the
// uint64 fields, rounds to 2^64, which bounds the same integers: none a document holds exceeds
// 2^64 - 1.
json readable_by_valijson(json schema) {
  if (beyond_int64(schema)) return json(schema.get<double>());
  if (schema.is_structured()) {
    for (json& element : schema) element = readable_by_valijson(std::move(element));
  }
  return schema;
}

const json& schema_json() {
  static const json parsed = json::parse(results_schema_text());
  return parsed;
}

// Parsed once: valijson's Schema can be neither copied nor moved.
struct ValijsonSchema {
  ValijsonSchema() {
    const json readable = readable_by_valijson(schema_json());
    valijson::SchemaParser(valijson::SchemaParser::kDraft7)
        .populateSchema(valijson::adapters::NlohmannJsonAdapter(readable), schema);
  }
  valijson::Schema schema;
};

const valijson::Schema& valijson_schema() {
  static const ValijsonSchema parsed;
  return parsed.schema;
}

// ---------------------------------------------------------------------------------------------
// Where a value sits: in the document, by its field path as refusals name it
// ("results[3].kernel.median_s"), and in the schema, by the subschema that governs it.

const json* resolved(const json* node) {
  while (node != nullptr && node->is_object() && node->contains("$ref")) {
    const std::string reference = node->at("$ref").get<std::string>();
    node = &schema_json().at(json::json_pointer(reference.substr(1)));  // "#/definitions/..."
  }
  return node;
}

const json* member_schema(const json* node, const std::string& key) {
  node = resolved(node);
  if (node == nullptr || !node->is_object()) return nullptr;
  if (const auto properties = node->find("properties");
      properties != node->end() && properties->contains(key)) {
    return resolved(&properties->at(key));
  }
  const auto additional = node->find("additionalProperties");
  return additional != node->end() && additional->is_object() ? resolved(&*additional) : nullptr;
}

const json* element_schema(const json* node) {
  node = resolved(node);
  if (node == nullptr || !node->is_object() || !node->contains("items")) return nullptr;
  return resolved(&node->at("items"));
}

struct Place {
  const json* value = nullptr;   // in the document
  const json* schema = nullptr;  // its subschema, or null where none describes it
  std::string path;              // "results[3].n"; empty at the top
};

Place member(const Place& place, const std::string& key) {
  const auto it = place.value->find(key);
  return {it == place.value->end() ? nullptr : &*it, member_schema(place.schema, key),
          place.path.empty() ? key : fmt::format("{}.{}", place.path, key)};
}

Place element(const Place& place, std::size_t index) {
  return {&place.value->at(index), element_schema(place.schema),
          fmt::format("{}[{}]", place.path, index)};
}

// One step down a path of keys and indexes (valijson's "[results]", "[3]"; a JSON pointer's
// "results", "3"), whichever the value there is.
std::optional<Place> step(const Place& place, const std::string& token) {
  if (place.value->is_object() && place.value->contains(token)) return member(place, token);
  if (place.value->is_array() && !token.empty() &&
      token.find_first_not_of("0123456789") == std::string::npos) {
    const std::size_t index = std::stoul(token);
    if (index < place.value->size()) return element(place, index);
  }
  return std::nullopt;
}

Place place_of(const json& document, const std::vector<std::string>& tokens) {
  Place place{&document, resolved(&schema_json()), ""};
  for (const std::string& token : tokens) {
    const std::optional<Place> next = step(place, token);
    if (!next) break;
    place = *next;
  }
  return place;
}

// ---------------------------------------------------------------------------------------------
// What a value is and what it must be, in words.

long double numeric(const json& number) {
  if (number.is_number_unsigned()) return static_cast<long double>(number.get<std::uint64_t>());
  if (number.is_number_integer()) return static_cast<long double>(number.get<std::int64_t>());
  return static_cast<long double>(number.get<double>());
}

bool whole(double x) {
  return std::isfinite(x) && x == std::floor(x);
}

std::string shown(const json& value) {
  switch (value.type()) {
    case json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      return text.size() <= 60 ? fmt::format("'{}'", text)
                               : fmt::format("'{}…'", text.substr(0, 60));
    }
    case json::value_t::number_float: {
      const double x = value.get<double>();
      if (!whole(x)) return fmt::format("{}", x);
      return std::fabs(x) < 1e16 ? fmt::format("{:.1f}", x) : fmt::format("{:.0f}", x);
    }
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    default:  // integers, booleans, null: as written
      return value.dump();
  }
}

std::vector<std::string> types_of(const json& schema) {
  const auto it = schema.find("type");
  if (it == schema.end()) return {};
  if (it->is_string()) return {it->get<std::string>()};
  return it->get<std::vector<std::string>>();
}

bool has_type(const json& value, const std::string& type) {
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  return type == "null" && value.is_null();
}

std::string type_in_words(const std::string& type) {
  if (type == "integer") return "a whole number";
  if (type == "number") return "a number";
  if (type == "string") return "a string";
  if (type == "boolean") return "true or false";
  if (type == "object") return "an object";
  if (type == "array") return "an array";
  return type;
}

// The rule a number outside the schema's bounds breaks, or nothing.
std::optional<std::string> broken_bound(const json& value, const json& schema) {
  const long double x = numeric(value);
  const auto bound = [&](const char* keyword) -> std::optional<long double> {
    const auto it = schema.find(keyword);
    if (it == schema.end() || !it->is_number()) return std::nullopt;
    return numeric(*it);
  };
  const auto low = bound("minimum"), high = bound("maximum");
  const auto above = bound("exclusiveMinimum"), below = bound("exclusiveMaximum");
  const bool too_low = (low && x < *low) || (above && x <= *above);
  const bool too_high = (high && x > *high) || (below && x >= *below);
  if (!too_low && !too_high) return std::nullopt;
  const std::vector<std::string> types = types_of(schema);
  const bool integers = std::find(types.begin(), types.end(), "number") == types.end();
  if (low && high && !integers) {
    return fmt::format("it must be between {} and {}", schema["minimum"].dump(),
                       schema["maximum"].dump());
  }
  if (too_high) {
    return fmt::format("it must be at most {}",
                       schema[high ? "maximum" : "exclusiveMaximum"].dump());
  }
  if ((above && *above == 0) || (low && *low == 1 && integers)) return "it must be positive";
  if (low && *low == 0) return "it must not be negative";
  return fmt::format("it must be at least {}", schema[low ? "minimum" : "exclusiveMinimum"].dump());
}

std::optional<std::string> broken_type(const json& value, const json& schema) {
  const std::vector<std::string> types = types_of(schema);
  if (types.empty()) return std::nullopt;
  for (const std::string& type : types) {
    if (has_type(value, type)) return std::nullopt;
  }
  if (value.is_number_float() && std::find(types.begin(), types.end(), "integer") != types.end()) {
    if (!whole(value.get<double>())) return "it must be a whole number";
    // Integral, yet read as a floating-point number: beyond 64 bits, or written with a point.
    if (auto bound = broken_bound(value, schema)) return bound;
    return "it must be a whole number written without a decimal point or exponent";
  }
  std::vector<std::string> words;
  for (const std::string& type : types) words.push_back(type_in_words(type));
  return fmt::format("it must be {}", fmt::join(words, " or "));
}

std::optional<std::string> broken_spelling(const json& value, const json& schema) {
  if (const auto it = schema.find("const"); it != schema.end() && value != *it) {
    return fmt::format("it must be {}", shown(*it));
  }
  const auto it = schema.find("enum");
  if (it == schema.end() || std::find(it->begin(), it->end(), value) != it->end()) {
    return std::nullopt;
  }
  std::vector<std::string> spellings;
  bool empty_allowed = false;
  for (const json& spelling : *it) {
    if (spelling == "") {
      empty_allowed = true;
    } else {
      spellings.push_back(spelling.is_string() ? spelling.get<std::string>() : spelling.dump());
    }
  }
  return fmt::format("it must be one of {}{}", fmt::join(spellings, ", "),
                     empty_allowed ? " (or empty, in older files)" : "");
}

std::optional<std::string> broken_length(const json& value, const json& schema) {
  if (!value.is_array()) return std::nullopt;
  const std::size_t fewest = schema.value("minItems", std::size_t{0});
  const std::size_t most = schema.value("maxItems", std::numeric_limits<std::size_t>::max());
  if (value.size() >= fewest && value.size() <= most) return std::nullopt;
  if (fewest == most) return fmt::format("it must have {} elements", fewest);
  return value.size() < fewest ? fmt::format("it must have at least {} elements", fewest)
                               : fmt::format("it must have at most {} elements", most);
}

// "PATH is VALUE; RULE" for the rule of `place`'s subschema that its value breaks, or nothing
// where none does (valijson's own words are then all there is).
std::optional<std::string> refusal(const Place& place) {
  if (place.value == nullptr || place.schema == nullptr) return std::nullopt;
  const json& value = *place.value;
  const json& schema = *place.schema;
  if (value.is_object() && schema.contains("required")) {
    for (const json& key : schema["required"]) {
      if (!value.contains(key.get<std::string>())) {
        return fmt::format("{} is missing; it is required", member(place, key).path);
      }
    }
  }
  const std::string path = place.path.empty() ? "the document" : place.path;
  std::optional<std::string> rule = broken_type(value, schema);
  if (!rule) rule = broken_spelling(value, schema);
  if (!rule && value.is_number()) rule = broken_bound(value, schema);
  if (rule) return fmt::format("{} is {}; {}", path, shown(value), *rule);
  if (const auto length = broken_length(value, schema)) {
    return fmt::format("{} is {} elements long; {}", path, value.size(), *length);
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Integers beyond int64, which valijson cannot read: checked here against their bounds, then
// read by valijson as 2^63 - 1 (which passes every bound that the value itself passes).

void settle_large_integers(const Place& place, json& copy) {
  if (beyond_int64(*place.value)) {
    if (const auto why = refusal(place)) throw UsageError(*why);
    copy = kLargestSigned;
  } else if (place.value->is_object()) {
    for (auto it = place.value->begin(); it != place.value->end(); ++it) {
      settle_large_integers(member(place, it.key()), copy[it.key()]);
    }
  } else if (place.value->is_array()) {
    for (std::size_t i = 0; i < place.value->size(); ++i) {
      settle_large_integers(element(place, i), copy[i]);
    }
  }
}

bool holds_large_integers(const json& value) {
  if (beyond_int64(value)) return true;
  if (!value.is_structured()) return false;
  for (const json& element : value) {
    if (holds_large_integers(element)) return true;
  }
  return false;
}

std::vector<std::string> tokens_of(const std::vector<std::string>& context) {
  std::vector<std::string> tokens;
  for (const std::string& part : context) {
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') {
      tokens.push_back(part.substr(1, part.size() - 2));
    }
  }
  return tokens;
}

}  // namespace

void check_against_results_schema(const json& document) {
  const json* checked = &document;
  json copy;
  if (holds_large_integers(document)) {
    copy = document;
    settle_large_integers(place_of(document, {}), copy);
    checked = &copy;
  }
  valijson::Validator validator;  // strict: 1.0 is no integer, "1" no number
  valijson::ValidationResults results;
  if (validator.validate(valijson_schema(), valijson::adapters::NlohmannJsonAdapter(*checked),
                         &results)) {
    return;
  }
  // valijson reports the innermost failure first, then each object and array around it.
  valijson::ValidationResults::Error first;
  results.popError(first);
  const Place place = place_of(document, tokens_of(first.context));
  if (const auto why = refusal(place)) throw UsageError(*why);
  throw UsageError(
      fmt::format("{}: {}", place.path.empty() ? "the document" : place.path, first.description));
}

std::string field_path(const json& document, std::string_view json_pointer) {
  // "/results/3/n": tokens between slashes, "~1" standing for '/' and "~0" for '~'.
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < json_pointer.size(); ++i) {
    if (json_pointer[i] == '/') {
      tokens.emplace_back();
    } else if (!tokens.empty() && json_pointer[i] == '~' && i + 1 < json_pointer.size()) {
      tokens.back() += json_pointer[++i] == '1' ? '/' : '~';
    } else if (!tokens.empty()) {
      tokens.back() += json_pointer[i];
    }
  }
  return place_of(document, tokens).path;
}

}  // namespace nbody
