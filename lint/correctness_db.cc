#include "lint/correctness_db.h"

#include <toml++/toml.h>

#include <optional>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lint/catalogue.h"
#include "lint/torch_version.h"
#include "re2/re2.h"

namespace cl::lint {
namespace {

constexpr int kSchemaVersion = 1;
constexpr absl::string_view kCategories[] = {"aliasing",    "mutation", "custom_op", "control_flow",
                                             "side_effect", "rng",      "autograd",  "guarding",
                                             "recompile",   "streams",  "interop"};

uint32_t LineOf(const toml::node& n) { return static_cast<uint32_t>(n.source().begin.line); }

// toml++ speaks std::string_view; Debian's abseil has its own string_view.
absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }
std::string_view Std(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace

// Reads a parsed TOML document into a CorrectnessDb, stopping at the first problem.
class DbLoader {
 public:
  explicit DbLoader(CorrectnessDb& db) : db_(db) {}

  absl::Status Load(const toml::table& root) {
    for (auto&& [key, node] : root) {
      const absl::string_view k = Sv(key.str());
      if (k != "schema_version" && k != "updated" && k != "pattern") {
        return Error(node, absl::StrCat("unknown top-level key \"", k,
                                        "\" (schema_version, updated, [[pattern]])"));
      }
    }
    const toml::node* version = root.get("schema_version");
    if (version == nullptr)
      return Error(1, "schema_version is missing (this build reads schema_version = 1)");
    const std::optional<int64_t> v = version->value<int64_t>();
    if (!v || !version->is_integer() || *v != kSchemaVersion) {
      return Error(*version, absl::StrCat("schema_version must be ", kSchemaVersion));
    }
    db_.schema_version_ = kSchemaVersion;
    if (const toml::node* updated = root.get("updated"); updated != nullptr) {
      if (const toml::date* d = updated->as_date() ? &updated->as_date()->get() : nullptr;
          d != nullptr) {
        std::ostringstream s;
        s << *d;
        db_.updated_ = s.str();
      } else if (updated->is_string()) {
        db_.updated_ = *updated->value<std::string>();
      } else {
        return Error(*updated, "updated must be a date (2026-01-15) or a string");
      }
    }
    const toml::node* patterns = root.get("pattern");
    if (patterns == nullptr || !patterns->is_array_of_tables()) {
      return Error(patterns == nullptr ? 1 : LineOf(*patterns), "the DB has no [[pattern]] tables");
    }
    for (const toml::node& p : *patterns->as_array()) {
      if (absl::Status s = Pattern(*p.as_table()); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  static absl::Status Error(uint32_t line, absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("correctness DB line ", line, ": ", message));
  }
  static absl::Status Error(const toml::node& at, absl::string_view message) {
    return Error(LineOf(at), message);
  }
  absl::Status PatternError(const toml::node& at, absl::string_view message) const {
    return Error(at, absl::StrCat("pattern \"", id_, "\": ", message));
  }

  absl::Status String(const toml::table& t, absl::string_view key, std::string* out,
                      bool required = false) {
    const toml::node* n = t.get(Std(key));
    if (n == nullptr) {
      return required ? PatternError(t, absl::StrCat(key, " is missing")) : absl::OkStatus();
    }
    if (!n->is_string()) return PatternError(*n, absl::StrCat(key, " must be a string"));
    *out = *n->value<std::string>();
    return absl::OkStatus();
  }

  absl::Status Names(const toml::table& t, absl::string_view key, NameMatcher* out,
                     bool* given = nullptr) {
    const toml::node* n = t.get(Std(key));
    if (n == nullptr) return absl::OkStatus();
    if (!n->is_array()) return PatternError(*n, absl::StrCat(key, " must be an array of strings"));
    std::vector<std::string> names;
    for (const toml::node& e : *n->as_array()) {
      if (!e.is_string()) return PatternError(e, absl::StrCat(key, " must be an array of strings"));
      names.push_back(*e.value<std::string>());
    }
    std::string error;
    std::optional<NameMatcher> m = NameMatcher::Parse(names, &error);
    if (!m) return PatternError(*n, absl::StrCat(key, ": ", error));
    *out = std::move(*m);
    if (given != nullptr) *given = true;
    return absl::OkStatus();
  }

  absl::Status SeverityValue(const toml::node& n, absl::string_view key, Severity* out) {
    if (!n.is_string()) return PatternError(n, absl::StrCat(key, " must be a string"));
    const std::string s = *n.value<std::string>();
    std::optional<Severity> sev = ParseSeverity(s);
    if (!sev)
      return PatternError(n, absl::StrCat(key, " \"", s, "\" is not one of error, warning, info"));
    *out = *sev;
    return absl::OkStatus();
  }

  absl::Status Rule(const toml::table& t, PatternSpec& p) {
    SeverityRule rule;
    for (auto&& [key, node] : t) {
      const absl::string_view k = Sv(key.str());
      if (k != "producer_in" && k != "form_in" && k != "in_loop" && k != "torch" &&
          k != "severity") {
        return PatternError(node,
                            absl::StrCat("escalate_if: unknown condition \"", k,
                                         "\" (producer_in, form_in, in_loop, torch, severity)"));
      }
    }
    if (const toml::node* s = t.get("severity"); s != nullptr) {
      if (absl::Status st = SeverityValue(*s, "escalate_if.severity", &rule.severity); !st.ok())
        return st;
    } else {
      return PatternError(t, "escalate_if needs a severity");
    }
    if (absl::Status s = Names(t, "producer_in", &rule.producer_in); !s.ok()) return s;
    if (absl::Status s = Names(t, "form_in", &rule.form_in); !s.ok()) return s;
    if (const toml::node* n = t.get("in_loop"); n != nullptr) {
      if (!n->is_boolean()) return PatternError(*n, "escalate_if.in_loop must be true or false");
      rule.in_loop = *n->value<bool>();
    }
    if (absl::Status s = String(t, "torch", &rule.torch); !s.ok()) return s;
    if (!rule.torch.empty()) {
      std::string error;
      if (!VersionSpecifier::Parse(rule.torch, &error)) return PatternError(*t.get("torch"), error);
    }
    p.rules.push_back(std::move(rule));
    return absl::OkStatus();
  }

  absl::Status Detect(const toml::table& t, PatternSpec& p) {
    static constexpr absl::string_view kKeys[] = {"kind",
                                                  "node",
                                                  "method_names",
                                                  "function_names",
                                                  "attr_names",
                                                  "view_producers",
                                                  "overlap_producers",
                                                  "exclude_methods",
                                                  "exclude_functions",
                                                  "require_tensor",
                                                  "escalate_if"};
    for (auto&& [key, node] : t) {
      if (std::find(std::begin(kKeys), std::end(kKeys), Sv(key.str())) == std::end(kKeys)) {
        return PatternError(node, absl::StrCat("detect: unknown key \"", Sv(key.str()), "\""));
      }
    }
    const toml::node* kind = t.get("kind");
    if (kind == nullptr) return PatternError(t, "detect.kind is missing");
    if (!kind->is_string()) return PatternError(*kind, "detect.kind must be a string");
    const std::string kind_name = *kind->value<std::string>();
    std::optional<DetectorKind> k = ParseDetectorKind(kind_name);
    if (!k) {
      return PatternError(*kind,
                          absl::StrCat("detect.kind \"", kind_name, "\" is not a detector kind (",
                                       absl::StrJoin(DetectorKindNames(), ", "), ")"));
    }
    if (*k != p.kind)
      p.params = DetectorParams();  // another kind's built-in parameters do not apply
    p.kind = *k;
    bool names = false;
    if (absl::Status s = Names(t, "method_names", &p.params.method_names, &names); !s.ok())
      return s;
    if (absl::Status s = Names(t, "function_names", &p.params.function_names, &names); !s.ok())
      return s;
    if (absl::Status s = Names(t, "attr_names", &p.params.attr_names); !s.ok()) return s;
    if (absl::Status s = Names(t, "view_producers", &p.params.view_producers); !s.ok()) return s;
    if (absl::Status s = Names(t, "overlap_producers", &p.params.overlap_producers); !s.ok())
      return s;
    if (absl::Status s = Names(t, "exclude_methods", &p.params.exclude_methods); !s.ok()) return s;
    if (absl::Status s = Names(t, "exclude_functions", &p.params.exclude_functions); !s.ok())
      return s;
    if (const toml::node* n = t.get("node"); n != nullptr && !n->is_string()) {
      return PatternError(*n, "detect.node must be a string");
    }
    if (const toml::node* n = t.get("require_tensor"); n != nullptr) {
      if (!n->is_boolean()) return PatternError(*n, "detect.require_tensor must be true or false");
      p.params.require_tensor = *n->value<bool>();
    }
    if ((p.kind == DetectorKind::kCallInRegion || p.kind == DetectorKind::kDecoratedInRegion) &&
        p.params.function_names.empty() && p.params.method_names.empty()) {
      return PatternError(*kind, absl::StrCat("detect.kind \"", kind_name,
                                              "\" needs function_names or method_names to match"));
    }
    if (const toml::node* e = t.get("escalate_if"); e != nullptr) {
      if (e->is_table()) {
        if (absl::Status s = Rule(*e->as_table(), p); !s.ok()) return s;
      } else if (e->is_array_of_tables()) {
        for (const toml::node& r : *e->as_array()) {
          if (absl::Status s = Rule(*r.as_table(), p); !s.ok()) return s;
        }
      } else {
        return PatternError(*e, "detect.escalate_if must be a table or an array of tables");
      }
    }
    return absl::OkStatus();
  }

  absl::Status Issues(const toml::node& n, PatternSpec& p) {
    if (!n.is_array_of_tables()) return PatternError(n, "issues must be [[pattern.issues]] tables");
    for (const toml::node& e : *n.as_array()) {
      const toml::table& t = *e.as_table();
      for (auto&& [key, node] : t) {
        const absl::string_view k = Sv(key.str());
        if (k != "url" && k != "status" && k != "summary" && k != "versions") {
          return PatternError(node, absl::StrCat("issues: unknown key \"", k,
                                                 "\" (url, status, summary, versions)"));
        }
      }
      IssueLink link;
      if (absl::Status s = String(t, "url", &link.url, /*required=*/true); !s.ok()) return s;
      if (!absl::StartsWith(link.url, "https://") && !absl::StartsWith(link.url, "http://")) {
        return PatternError(*t.get("url"),
                            absl::StrCat("issue url \"", link.url, "\" is not an http(s) link"));
      }
      if (absl::Status s = String(t, "status", &link.status); !s.ok()) return s;
      if (!link.status.empty() && link.status != "open" && link.status != "closed" &&
          link.status != "fixed") {
        return PatternError(*t.get("status"), absl::StrCat("issue status \"", link.status,
                                                           "\" is not one of open, closed, fixed"));
      }
      if (absl::Status s = String(t, "summary", &link.summary); !s.ok()) return s;
      std::string versions;
      if (absl::Status s = String(t, "versions", &versions); !s.ok()) return s;
      p.issues.push_back(std::move(link));
    }
    return absl::OkStatus();
  }

  absl::Status Pattern(const toml::table& t) {
    static constexpr absl::string_view kKeys[] = {
        "id",        "title",  "category",          "severity", "confidence", "scope",  "message",
        "rationale", "remedy", "affected_versions", "fixed_in", "detect",     "issues", "examples"};
    id_ = std::string("?");
    const toml::node* id = t.get("id");
    if (id == nullptr || !id->is_string())
      return Error(id == nullptr ? LineOf(t) : LineOf(*id), "a pattern needs a string id");
    id_ = *id->value<std::string>();
    static const RE2 kId("[a-z][a-z0-9_]*");
    if (!RE2::FullMatch(id_, kId)) return PatternError(*id, "the id must match ^[a-z][a-z0-9_]*$");
    if (!ids_.insert(id_).second) return PatternError(*id, "the id is used by an earlier pattern");
    for (auto&& [key, node] : t) {
      if (std::find(std::begin(kKeys), std::end(kKeys), Sv(key.str())) == std::end(kKeys)) {
        return PatternError(node, absl::StrCat("unknown key \"", Sv(key.str()), "\""));
      }
    }

    const PatternSpec* builtin = FindBuiltinPattern(id_);
    PatternSpec p = builtin != nullptr ? *builtin : PatternSpec();
    p.id = id_;
    p.rated = true;
    if (absl::Status s = String(t, "title", &p.title); !s.ok()) return s;
    if (absl::Status s = String(t, "category", &p.category, /*required=*/true); !s.ok()) return s;
    if (std::find(std::begin(kCategories), std::end(kCategories), p.category) ==
        std::end(kCategories)) {
      return PatternError(*t.get("category"),
                          absl::StrCat("category \"", p.category, "\" is not one of ",
                                       absl::StrJoin(kCategories, ", ")));
    }
    const toml::node* severity = t.get("severity");
    if (severity == nullptr) return PatternError(t, "severity is missing");
    if (absl::Status s = SeverityValue(*severity, "severity", &p.severity); !s.ok()) return s;
    if (const toml::node* c = t.get("confidence"); c != nullptr) {
      const std::optional<double> v = c->value<double>();
      // Written so that nan is refused too: it compares false both ways.
      if (!v || !(c->is_floating_point() || c->is_integer()) || !(*v >= 0 && *v <= 1)) {
        return PatternError(*c, "confidence must be a number from 0 to 1");
      }
      p.confidence = *v;
    }
    std::string scope;
    if (absl::Status s = String(t, "scope", &scope); !s.ok()) return s;
    if (!scope.empty()) {
      std::optional<Scope> sc = ParseScope(scope);
      if (!sc) {
        return PatternError(*t.get("scope"),
                            absl::StrCat("scope \"", scope,
                                         "\" is not one of compiled_region, anywhere, "
                                         "outside_compiled_region"));
      }
      p.scope = *sc;
    }
    std::string message;
    if (absl::Status s = String(t, "message", &message); !s.ok()) return s;
    if (!message.empty()) p.message = message;
    std::string rationale;
    if (absl::Status s = String(t, "rationale", &rationale); !s.ok()) return s;
    std::string remedy;
    if (absl::Status s = String(t, "remedy", &remedy); !s.ok()) return s;
    if (!remedy.empty()) p.remedy = remedy;
    if (absl::Status s = String(t, "affected_versions", &p.affected_versions); !s.ok()) return s;
    if (!p.affected_versions.empty()) {
      std::string error;
      if (!VersionSpecifier::Parse(p.affected_versions, &error)) {
        return PatternError(*t.get("affected_versions"),
                            absl::StrCat("affected_versions: ", error));
      }
    }
    if (absl::Status s = String(t, "fixed_in", &p.fixed_in); !s.ok()) return s;
    if (!p.fixed_in.empty() && !TorchVersion::Parse(p.fixed_in)) {
      return PatternError(*t.get("fixed_in"),
                          absl::StrCat("fixed_in \"", p.fixed_in, "\" is not a version"));
    }
    const toml::node* detect = t.get("detect");
    if (detect == nullptr) return PatternError(t, "[pattern.detect] with a kind is missing");
    if (!detect->is_table()) return PatternError(*detect, "detect must be a table");
    if (absl::Status s = Detect(*detect->as_table(), p); !s.ok()) return s;
    if (const toml::node* issues = t.get("issues"); issues != nullptr) {
      if (absl::Status s = Issues(*issues, p); !s.ok()) return s;
    }
    if (const toml::node* examples = t.get("examples");
        examples != nullptr && !examples->is_array_of_tables()) {
      return PatternError(*examples, "examples must be [[pattern.examples]] tables");
    }
    bool error_severity = p.severity == Severity::kError;
    for (const SeverityRule& r : p.rules)
      error_severity = error_severity || r.severity == Severity::kError;
    if (error_severity && p.issues.empty()) {
      return PatternError(*severity, "error severity needs at least one [[pattern.issues]] link");
    }
    db_.patterns_.push_back(std::move(p));
    return absl::OkStatus();
  }

  CorrectnessDb& db_;
  std::string id_;
  absl::flat_hash_set<std::string> ids_;
};

absl::StatusOr<CorrectnessDb> CorrectnessDb::Parse(absl::string_view text) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(text.data(), text.size()));
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("correctness DB line ", e.source().begin.line,
                                                   ", column ", e.source().begin.column, ": ",
                                                   Sv(e.description())));
  }
  CorrectnessDb db;
  if (absl::Status s = DbLoader(db).Load(root); !s.ok()) return s;
  return db;
}

const PatternSpec* CorrectnessDb::Find(absl::string_view id) const {
  for (const PatternSpec& p : patterns_) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

}  // namespace cl::lint
