#pragma once
// The JSON Schema of results.json (docs/results.schema.json, built into the program), and the check
// of a document against it, which load_results makes before reading the document into the model.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace nbody {

// The text of docs/results.schema.json as it was when this program was built.
std::string_view results_schema_text();

// Checks `document` against the schema (with valijson). Throws UsageError naming the first field
// that breaks it by its path and saying what it must be, e.g. "results[3].n is 1.5; it must be a
// whole number" or "results[0].status is missing; it is required".
void check_against_results_schema(const nlohmann::json& document);

// The field a JSON pointer of `document` names, as refusals name it: "/results/3/n" is
// "results[3].n".
std::string field_path(const nlohmann::json& document, std::string_view json_pointer);

}  // namespace nbody
