// Every recompile and graph-break reason in the real TORCH_TRACE fixtures must land in a category.
//
// The fixtures (tests/fixtures/torch_trace) come from torch 2.6 runs and from
// tlparse's own test inputs (torch 2024–2026), so they cover the formats users actually upload.
// A reason the parsers cannot categorise fails the test unless it is listed, with why, in
// kKnownUncategorised below.
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "analyzers/common/restarts.h"
#include "analyzers/recompile/graph_breaks.h"
#include "analyzers/recompile/reason.h"
#include "gtest/gtest.h"
#include "proto/report_words.h"
#include "tests/analyzers/torch_trace_scan.h"
#include "tests/testing/fixtures.h"

namespace cl {
namespace {

using ::google::protobuf::Value;

// Reasons (by a substring) that are known not to categorise, and why. Add an entry only with the
// reason it cannot be categorised.
const std::map<std::string, std::string>& KnownUncategorised() {
  static const auto* const kKnown = new std::map<std::string, std::string>{
      // torch 2.6's speculation restart with no GraphCompileReason (a `step_unsupported` break,
      // torch-2.6/rnn_lm): the text names no cause to categorise; it has a remedy of its own.
      {"Unknown fail_and_restart_analysis", "torch names no reason"},
  };
  return *kKnown;
}

bool IsKnownUncategorised(const std::string& text) {
  for (const auto& [substring, why] : KnownUncategorised()) {
    if (absl::StrContains(text, substring)) return true;
  }
  return false;
}

struct Tally {
  std::map<std::string, int> recompile_categories;
  std::map<std::string, int> graph_break_categories;
  int recompile_reasons = 0;     // recompile_reasons artifact elements
  int metrics_reasons = 0;       // compilation_metrics.recompile_reason values
  int graph_break_payloads = 0;  // dynamo_graph_break_reason records
  int restart_reasons = 0;       // compilation_metrics.restart_reasons (graph-break reasons)
  int limit_messages = 0;
  int files = 0;
  std::vector<std::string> failures;
};

void CheckReason(const std::string& reason, const std::string& where, Tally* tally) {
  for (const GuardFailure& f : ParseRecompileReason(reason)) {
    const std::string category(Word(f.category));
    ++tally->recompile_categories[category];
    const bool uncategorised =
        f.category == v1::RecompileCategory::OTHER || f.category == v1::RecompileCategory::UNKNOWN;
    if (uncategorised && !IsKnownUncategorised(reason)) {
      tally->failures.push_back(where + ": recompile reason \"" + reason + "\" → " + category);
    }
  }
}

void CheckGraphBreak(const std::string& text, const std::string& where, Tally* tally) {
  const ParsedGraphBreak parsed = ParseGraphBreak(text);
  ++tally->graph_break_categories[std::string(Word(parsed.category))];
  if (parsed.category == v1::GraphBreakCategory::OTHER && !IsKnownUncategorised(text)) {
    tally->failures.push_back(where + ": graph break \"" + parsed.reason + "\" → other");
  }
}

std::string StringOrEmpty(const google::protobuf::Struct& s, const char* name) {
  auto it = s.fields().find(name);
  return it != s.fields().end() && it->second.kind_case() == Value::kStringValue
             ? it->second.string_value()
             : "";
}

void ScanRecord(const testing::TraceRecord& record, const std::string& file, Tally* tally) {
  const std::string where = file + ":" + std::to_string(record.line);
  const auto& fields = record.metadata.fields();
  if (auto it = fields.find("artifact"); it != fields.end()) {
    const std::string name = StringOrEmpty(it->second.struct_value(), "name");
    if (name == "recompile_reasons") {
      // A single reason is the JSON string itself; several are a JSON list.
      Value value;
      ASSERT_TRUE(testing::ParseJsonValue(record.payload, &value)) << where;
      std::vector<std::string> reasons;
      if (value.kind_case() == Value::kStringValue) reasons.push_back(value.string_value());
      for (const Value& v : value.list_value().values()) reasons.push_back(v.string_value());
      for (const std::string& reason : reasons) {
        ++tally->recompile_reasons;
        CheckReason(reason, where, tally);
      }
    } else if (name == "dynamo_graph_break_reason") {
      ++tally->graph_break_payloads;
      CheckGraphBreak(record.payload, where, tally);
    }
  }
  // Older torch logged the graph-break reason as an event of its own.
  if (fields.count("dynamo_graph_break_reason") > 0) {
    ++tally->graph_break_payloads;
    CheckGraphBreak(record.payload, where, tally);
  }
  if (auto it = fields.find("compilation_metrics"); it != fields.end()) {
    const google::protobuf::Struct& metrics = it->second.struct_value();
    if (std::string reason = StringOrEmpty(metrics, "recompile_reason"); !reason.empty()) {
      ++tally->metrics_reasons;
      CheckReason(reason, where, tally);
    }
    if (auto restarts = metrics.fields().find("restart_reasons");
        restarts != metrics.fields().end()) {
      for (const Value& v : restarts->second.list_value().values()) {
        ++tally->restart_reasons;
        // A restart of another kind ("<class '...TensorifyScalarRestartAnalysis'>") is no break.
        if (IsGraphBreakRestart(v.string_value())) CheckGraphBreak(v.string_value(), where, tally);
      }
    }
    for (const char* key : {"fail_type", "fail_reason"}) {
      if (ParseCacheLimitMessage(StringOrEmpty(metrics, key))) ++tally->limit_messages;
    }
  }
}

TEST(RecompileCorpusTest, EveryFixtureReasonIsCategorised) {
  const std::filesystem::path root = testing::FixturePath("torch_trace");
  ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
  Tally tally;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    absl::StatusOr<std::string> text = testing::ReadFixture(entry.path().string());
    ASSERT_TRUE(text.ok()) << text.status();
    ++tally.files;
    const std::string relative = std::filesystem::relative(entry.path(), root).string();
    const std::string file(testing::WrittenName(relative));
    testing::ScanTorchTrace(
        *text, {"recompile_reason", "dynamo_graph_break_reason", "compilation_metrics"},
        [&](const testing::TraceRecord& record) { ScanRecord(record, file, &tally); });
  }

  std::cout << "scanned " << tally.files << " files: " << tally.recompile_reasons
            << " recompile_reasons elements, " << tally.metrics_reasons
            << " compilation_metrics.recompile_reason, " << tally.graph_break_payloads
            << " graph-break payloads, " << tally.restart_reasons << " restart reasons, "
            << tally.limit_messages << " cache-limit messages\n";
  for (const auto& [category, n] : tally.recompile_categories) {
    std::cout << "  recompile " << category << ": " << n << "\n";
  }
  for (const auto& [category, n] : tally.graph_break_categories) {
    std::cout << "  graph break " << category << ": " << n << "\n";
  }
  for (const std::string& failure : tally.failures) ADD_FAILURE() << failure;

  // The corpus as of this writing: 167 + 43 recompile reasons, 6 graph-break payloads, 9 restart
  // reasons. The floors keep the test from passing on a scan that found nothing.
  EXPECT_GE(tally.recompile_reasons, 150);
  EXPECT_GE(tally.metrics_reasons, 40);
  EXPECT_GE(tally.graph_break_payloads, 6);
  EXPECT_GE(tally.restart_reasons, 9);
  for (const char* category : {"size", "dtype", "global_state", "identity"}) {
    EXPECT_GT(tally.recompile_categories[category], 0) << category;
  }
  for (const char* category : {"user_requested", "data_dependent_branch", "scalar_extraction"}) {
    EXPECT_GT(tally.graph_break_categories[category], 0) << category;
  }
}

}  // namespace
}  // namespace cl
