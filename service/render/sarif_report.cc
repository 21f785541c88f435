#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/proto_json.h"
#include "common/utf8.h"
#include "google/protobuf/struct.pb.h"
#include "proto/report_words.h"
#include "service/render/markdown.h"
#include "service/render/sarif.h"
#include "service/render/struct_json.h"
#include "service/render/untrusted_text.h"

namespace cl {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;

constexpr absl::string_view kInformationUri = "https://github.com/compile-lens/compile-lens";

// A path as a URI reference: unreserved characters and '/' as they are, every other byte
// percent-encoded (RFC 3986). An absolute path becomes a file: URI.
std::string PathUri(absl::string_view path) {
  std::string out = absl::StartsWith(path, "/") ? "file://" : "";
  for (unsigned char c : path) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

std::string Text(absl::string_view untrusted) {
  return ScrubUntrusted(untrusted, Newlines::kFlatten);
}

struct Rule {
  std::string id, name, short_text, full_text, help_uri, level;
  std::string category;
};

class SarifBuilder {
 public:
  // The rule's index, adding it the first time its id is seen.
  int RuleIndex(Rule rule) {
    auto [it, inserted] = rule_index_.try_emplace(rule.id, static_cast<int>(rules_.size()));
    if (inserted) rules_.push_back(std::move(rule));
    return it->second;
  }

  // A result at `location` (nothing when it names no file: it could not be shown on a line).
  void Add(Rule rule, const std::string& level, const std::string& message,
           const v1::Location& location) {
    if (location.file().empty()) {
      ++unlocated_;
      return;
    }
    const std::string id = rule.id;
    const int index = RuleIndex(std::move(rule));
    Struct* r = results_.add_values()->mutable_struct_value();
    auto& f = *r->mutable_fields();
    f["ruleId"] = JsonString(id);
    f["ruleIndex"] = JsonNumber(index);
    f["level"] = JsonString(level);
    (*f["message"].mutable_struct_value()->mutable_fields())["text"] = JsonString(message);
    Struct* physical = f["locations"]
                           .mutable_list_value()
                           ->add_values()
                           ->mutable_struct_value()
                           ->mutable_fields()
                           ->
                           operator[]("physicalLocation")
                           .mutable_struct_value();
    auto& artifact =
        *(*physical->mutable_fields())["artifactLocation"].mutable_struct_value()->mutable_fields();
    artifact["uri"] = JsonString(PathUri(location.file()));
    if (!absl::StartsWith(location.file(), "/")) artifact["uriBaseId"] = JsonString("%SRCROOT%");
    const uint32_t line = location.line() > 0 ? location.line() : location.line_start();
    if (line > 0) {
      auto& region =
          *(*physical->mutable_fields())["region"].mutable_struct_value()->mutable_fields();
      region["startLine"] = JsonNumber(line);
      if (location.line_end() > line) region["endLine"] = JsonNumber(location.line_end());
    }
  }

  Struct Finish(absl::string_view tool_version) const {
    Struct root;
    auto& f = *root.mutable_fields();
    f["$schema"] = JsonString("https://json.schemastore.org/sarif-2.1.0.json");
    f["version"] = JsonString("2.1.0");
    Struct* run = f["runs"].mutable_list_value()->add_values()->mutable_struct_value();
    auto& rf = *run->mutable_fields();
    auto& driver = *(*rf["tool"].mutable_struct_value()->mutable_fields())["driver"]
                        .mutable_struct_value()
                        ->mutable_fields();
    driver["name"] = JsonString("compile-lens");
    driver["version"] = JsonString(std::string(tool_version));
    driver["semanticVersion"] = JsonString(std::string(tool_version));
    driver["informationUri"] = JsonString(std::string(kInformationUri));
    ListValue* rules = driver["rules"].mutable_list_value();
    for (const Rule& rule : rules_) {
      auto& r = *rules->add_values()->mutable_struct_value()->mutable_fields();
      r["id"] = JsonString(rule.id);
      r["name"] = JsonString(rule.name);
      (*r["shortDescription"].mutable_struct_value()->mutable_fields())["text"] =
          JsonString(rule.short_text);
      (*r["fullDescription"].mutable_struct_value()->mutable_fields())["text"] =
          JsonString(rule.full_text);
      auto& help = *r["help"].mutable_struct_value()->mutable_fields();
      help["text"] = JsonString(rule.full_text);
      help["markdown"] =
          JsonString(absl::StrCat(MarkdownText(rule.full_text), "\n\n[compile-lens](",
                                  rule.help_uri.empty() ? kInformationUri : rule.help_uri, ")"));
      (*r["defaultConfiguration"].mutable_struct_value()->mutable_fields())["level"] =
          JsonString(rule.level);
      (*r["helpUri"].mutable_string_value()) =
          rule.help_uri.empty() ? std::string(kInformationUri) : rule.help_uri;
      auto& props = *r["properties"].mutable_struct_value()->mutable_fields();
      props["tags"].mutable_list_value()->add_values()->set_string_value("torch.compile");
      props["tags"].mutable_list_value()->add_values()->set_string_value(rule.category);
    }
    *rf["results"].mutable_list_value() = results_;
    rf["columnKind"] = JsonString("unicodeCodePoints");
    (*rf["properties"].mutable_struct_value()->mutable_fields())["findingsWithoutLocation"] =
        JsonNumber(unlocated_);
    return root;
  }

 private:
  std::vector<Rule> rules_;
  std::map<std::string, int> rule_index_;
  ListValue results_;
  int unlocated_ = 0;
};

// "data_dependent_branch" -> "DataDependentBranch": SARIF's rule `name` is an identifier.
std::string RuleName(absl::string_view prefix, absl::string_view word) {
  std::string out(prefix);
  bool upper = true;
  for (char c : word) {
    if (!absl::ascii_isalnum(c)) {
      upper = true;
      continue;
    }
    out += upper ? absl::ascii_toupper(c) : c;
    upper = false;
  }
  return out;
}

// The id's last part: a word of ours, or a torch name reduced to [A-Za-z0-9_.-].
std::string IdPart(absl::string_view word) {
  std::string out;
  for (char c : word) out += absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-' ? c : '_';
  return out.empty() ? "unknown" : out;
}

std::string LintLevel(v1::LintFinding::Severity s) {
  switch (s) {
    case v1::LintFinding::ERROR:
      return "error";
    case v1::LintFinding::INFO:
      return "note";
    default:
      return "warning";  // WARNING, and UNRATED: a candidate worth a look
  }
}

void AddLint(const v1::LintSection& lint, SarifBuilder& out) {
  if (lint.status() != v1::OK) return;
  for (const v1::LintFinding& f : lint.findings()) {
    Rule rule;
    rule.id = absl::StrCat("lint/", IdPart(f.pattern()));
    rule.name = RuleName("Lint", f.pattern());
    rule.short_text = Text(f.title().empty() ? f.pattern() : f.title());
    rule.full_text = Text(f.remedy().empty() ? rule.short_text
                                             : absl::StrCat(rule.short_text, ". ", f.remedy()));
    if (!f.links().empty() && absl::StartsWith(f.links(0), "https://")) rule.help_uri = f.links(0);
    rule.level = LintLevel(f.severity());
    rule.category = f.category().empty() ? "lint" : Text(f.category());
    std::string message = Text(f.message().empty() ? rule.short_text : f.message());
    if (!f.remedy().empty()) absl::StrAppend(&message, " — remedy: ", Text(f.remedy()));
    out.Add(rule, LintLevel(f.severity()), message, f.location());
  }
}

void AddRecompile(const v1::RecompileSection& s, SarifBuilder& out) {
  if (s.status() != v1::OK) return;
  for (const v1::GraphBreakSummary& gb : s.graph_breaks()) {
    const std::string word(Word(gb.category()));
    Rule rule;
    rule.id = absl::StrCat("graph-break/", IdPart(word));
    rule.name = RuleName("GraphBreak", word);
    rule.short_text = absl::StrCat("torch.compile graph break: ", word.empty() ? "other" : word);
    rule.full_text =
        "Dynamo stopped tracing here and split the graph (the code around it runs "
        "in separate compiled graphs, or eagerly).";
    rule.level = "warning";
    rule.category = "graph-break";
    std::string message = absl::StrCat(
        "Graph break", gb.count() > 1 ? absl::StrCat(" (", gb.count(), "×)") : "",
        gb.frame().empty() ? "" : absl::StrCat(" in ", Text(gb.frame())), ": ", Text(gb.reason()));
    if (gb.frame_skipped()) absl::StrAppend(&message, ". The whole frame ran eagerly.");
    if (!gb.remedy().empty()) absl::StrAppend(&message, " — remedy: ", Text(gb.remedy()));
    out.Add(rule, "warning", message, gb.location());
  }
  for (const v1::RecompileCluster& c : s.clusters()) {
    const std::string word(Word(c.category()));
    Rule rule;
    rule.id = absl::StrCat("recompile/", IdPart(word));
    rule.name = RuleName("Recompile", word);
    rule.short_text = absl::StrCat("torch.compile recompiles on a ", word, " change");
    rule.full_text = "A guard of the compiled graph failed and torch compiled the frame again.";
    rule.level = "warning";
    rule.category = "recompile";
    std::string message =
        absl::StrCat(c.count(), " ", word, " recompile", c.count() == 1 ? "" : "s",
                     c.frame().empty() ? "" : absl::StrCat(" of ", Text(c.frame())),
                     c.axis().empty() ? "" : absl::StrCat(" on ", Text(c.axis())));
    if (!c.transitions().empty()) absl::StrAppend(&message, " (", Text(c.transitions(0)), ", …)");
    out.Add(rule, "warning", message, c.location());
  }
}

void AddFailures(const v1::FailuresSection& s, SarifBuilder& out) {
  if (s.status() != v1::OK) return;
  for (const v1::FailedCompile& f : s.failed()) {
    const std::string type = f.fail_type().empty() ? "unknown" : f.fail_type();
    Rule rule;
    rule.id = absl::StrCat("compile-failure/", IdPart(type));
    rule.name = RuleName("CompileFailure", IdPart(type));
    rule.short_text = Text(absl::StrCat("torch.compile failed: ", type));
    rule.full_text = "torch gave up compiling this frame; it did not run compiled.";
    if (f.exported()) {
      rule.id = absl::StrCat("export-failure/", IdPart(type));
      rule.name = RuleName("ExportFailure", IdPart(type));
      rule.short_text = Text(absl::StrCat("torch.export failed: ", type));
      rule.full_text = "torch.export could not trace this model; it was not exported.";
    }
    rule.level = "error";
    rule.category = "failure";
    std::string message = Text(absl::StrCat("Compile ", f.compile_id(), " failed (", type, ")",
                                            f.reason().empty() ? "" : ": ", f.reason()));
    message = ClipUtf8(message, 1000);
    if (!f.remedy().empty()) absl::StrAppend(&message, " — remedy: ", Text(f.remedy()));
    out.Add(rule, "error", message, f.location());
  }
}

// What a draft export could not prove: the exported program holds only where its decisions do.
void AddExportFindings(const v1::FailuresSection& s, SarifBuilder& out) {
  if (s.status() != v1::OK) return;
  for (const v1::ExportFinding& f : s.export_findings()) {
    const std::string kind(Word(f.kind()));
    Rule rule;
    rule.id = absl::StrCat("export-unproven/", IdPart(kind));
    rule.name = RuleName("ExportUnproven", IdPart(kind));
    rule.short_text = Text(absl::StrCat("torch.export could not prove this: ", kind));
    rule.full_text =
        "torch.export (draft_export) took this from the example inputs or ran the real kernel: "
        "the exported program is only right where it holds.";
    rule.level = "warning";
    rule.category = "failure";
    std::vector<std::string> decided;
    for (const v1::ExportDecision& d : f.decisions())
      decided.push_back(d.assertion().empty() ? d.expr() : d.assertion());
    std::string message =
        Text(absl::StrCat(kind, f.op().empty() ? "" : " ", f.op(),
                          decided.empty() ? "" : absl::StrCat(": ", absl::StrJoin(decided, ", "))));
    message = ClipUtf8(message, 1000);
    if (!f.remedy().empty()) absl::StrAppend(&message, " — remedy: ", Text(f.remedy()));
    out.Add(rule, "warning", message, f.location());
  }
}

}  // namespace

absl::StatusOr<std::string> RenderSarif(const v1::AnalysisReport& report,
                                        absl::string_view tool_version) {
  SarifBuilder out;
  AddFailures(report.failures(), out);
  AddExportFindings(report.failures(), out);
  AddRecompile(report.recompile(), out);
  AddLint(report.lint(), out);
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  return ToDeterministicJson(out.Finish(tool_version), options);
}

}  // namespace cl
