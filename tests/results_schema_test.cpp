// docs/results.schema.json, the contract of results.json: it is the schema the program checks
// with, every committed document follows it, it describes every field the tool writes, and the
// cases of tests/data/results-schema-cases.json are read or refused as they say, each refusal
// naming the file and the field in one line.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nbody/counters.hpp"
#include "nbody/errors.hpp"
#include "nbody/properties.hpp"
#include "nbody/results.hpp"
#include "nbody/results_schema.hpp"
#include "scratch_folder.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::scratch;

const fs::path kSource = NBODY_SOURCE_DIR;
const fs::path kCasesFile = kSource / "tests/data/results-schema-cases.json";

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const json& schema() {
  static const json parsed = json::parse(text_of(kSource / "docs/results.schema.json"));
  return parsed;
}

// The committed results documents: every sample (in every folder of docs/samples) and every
// document of tests/data, so that a new one is covered by being committed.
std::vector<fs::path> committed_documents() {
  std::vector<fs::path> documents;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "docs/samples")) {
    if (entry.path().filename() == "results.json") documents.push_back(entry.path());
  }
  for (const auto& entry : fs::directory_iterator(kSource / "tests/data")) {
    if (entry.path().extension() == ".json" && entry.path() != kCasesFile) {
      documents.push_back(entry.path());
    }
  }
  std::sort(documents.begin(), documents.end());
  return documents;
}

TEST(ResultsSchema, IsTheDocumentedFileAndCoversEveryVersionTheToolReads) {
  EXPECT_EQ(results_schema_text(), text_of(kSource / "docs/results.schema.json"))
      << "the program's schema is not docs/results.schema.json: reconfigure";
  const json& version = schema()["properties"]["schema_version"];
  EXPECT_EQ(version["minimum"], 1);
  EXPECT_EQ(version["maximum"], kResultsSchemaVersion);
  EXPECT_EQ(schema()["required"], json::array({"schema", "schema_version"}));
}

TEST(ResultsSchema, EveryCommittedDocumentFollowsIt) {
  const std::vector<fs::path> documents = committed_documents();
  EXPECT_GE(documents.size(), 15u);
  for (const fs::path& document : documents) {
    SCOPED_TRACE(document.string());
    EXPECT_NO_THROW(check_against_results_schema(json::parse(text_of(document))));
    EXPECT_NO_THROW(load_results(document));
  }
}

// The subschema below `node` for a key or an element, $refs followed; null where none.
const json* resolved(const json* node) {
  while (node != nullptr && node->contains("$ref")) {
    node = &schema().at(json::json_pointer(node->at("$ref").get<std::string>().substr(1)));
  }
  return node;
}
const json* below(const json* node, const std::string& key) {
  if (node->contains("properties") && node->at("properties").contains(key)) {
    return resolved(&node->at("properties").at(key));
  }
  if (node->contains("additionalProperties") && node->at("additionalProperties").is_object()) {
    return resolved(&node->at("additionalProperties"));
  }
  return nullptr;
}

// Every field of `value` has its place in the schema: none is left to "readers ignore fields they
// do not know".
void expect_described(const json& value, const json* node, const std::string& path) {
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      const json* member_node = below(node, key);
      if (member_node == nullptr) {
        ADD_FAILURE() << path << "." << key << " is written but not in the schema";
      } else {
        expect_described(member, member_node, path + "." + key);
      }
    }
  } else if (value.is_array() && node->contains("items")) {
    for (const json& element : value) {
      expect_described(element, resolved(&node->at("items")), path + "[]");
    }
  }
}

// What the tool writes today, every optional record present: the samples read and written again
// (trees, simulations, ranks, several GPUs, counters of both devices), every derived figure, and
// a tree's cost model.
TEST(ResultsSchema, DescribesEveryFieldTheToolWrites) {
  for (const fs::path& document : committed_documents()) {
    SCOPED_TRACE(document.string());
    expect_described(json(load_results(document)), &schema(), "");
  }
  ResultRecord record;
  record.counters = CounterReadout{.source = "test"};
  record.tree_work = TreeWork{.costs = TreeCostModel{.walk_ceiling = kGpuInteractionMixCeiling}};
#define NBODY_SET_FIGURE(name) record.counters->derived.name = 1.0;
  NBODY_DERIVED_FIGURES(NBODY_SET_FIGURE)
#undef NBODY_SET_FIGURE
  expect_described(json(record), resolved(&schema()["definitions"]["result"]), "results[]");
}

template <NamedEnum E>
json spellings() {
  json list = json::array();
  for (const auto& [value, name] : EnumNames<E>::kNames) list.push_back(std::string(name));
  return list;
}

TEST(ResultsSchema, EnumsHaveTheSpellingsTheModelReads) {
  const json& impl = schema()["definitions"]["implementation"]["properties"];
  EXPECT_EQ(impl["device"]["enum"], spellings<DeviceKind>());
  EXPECT_EQ(impl["layout"]["enum"], spellings<Layout>());
  EXPECT_EQ(impl["precision"]["enum"], spellings<Precision>());
  EXPECT_EQ(impl["accuracy_class"]["enum"], spellings<AccuracyClass>());
  EXPECT_EQ(impl["pairs"]["enum"], spellings<PairScheme>());
  EXPECT_EQ(impl["algorithm"]["enum"], spellings<Algorithm>());
  EXPECT_EQ(impl["role"]["enum"], spellings<Role>());
  EXPECT_EQ(schema()["definitions"]["result"]["properties"]["status"]["enum"], spellings<Status>());
  EXPECT_EQ(schema()["definitions"]["simulation"]["properties"]["status"]["enum"],
            spellings<Status>());
  EXPECT_EQ(schema()["definitions"]["ceiling_entry"]["properties"]["device"]["enum"],
            spellings<DeviceKind>());
}

// The text of one case's file: the cases' document changed as the case says.
std::string case_text(const json& base, const json& test) {
  if (test.contains("text")) return test["text"].get<std::string>();
  json document = test.contains("document") ? test["document"] : base;
  if (test.contains("patch")) document = document.patch(test["patch"]);
  return document.dump(2) + "\n" + test.value("append", std::string{});
}

TEST(ResultsSchema, CasesAreReadOrRefusedAsTheySay) {
  const json cases = json::parse(text_of(kCasesFile));
  const fs::path dir = scratch("schema-cases");
  const fs::path file = dir / "results.json";
  std::size_t valid = 0, refused = 0;
  for (const json& test : cases["tests"]) {
    const std::string description = test["description"].get<std::string>();
    SCOPED_TRACE(description);
    std::ofstream(file, std::ios::binary) << case_text(cases["document"], test);
    try {
      load_results(file);
      EXPECT_TRUE(test["valid"].get<bool>()) << "read without complaint";
      ++valid;
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_FALSE(test["valid"].get<bool>()) << message;
      ++refused;
      EXPECT_TRUE(message.starts_with(file.string())) << message;
      EXPECT_NE(message.find(test.value("message", std::string{})), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
    }
  }
  EXPECT_GE(valid, 5u);
  EXPECT_GE(refused, 30u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nbody
