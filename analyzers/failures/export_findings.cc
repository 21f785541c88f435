#include "analyzers/failures/export_findings.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "analyzers/common/location.h"
#include "re2/re2.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using Frames = google::protobuf::RepeatedPtrField<v1::StackFrame>;

// A sympy symbol torch names sizes with: s0 (backed), u0 (unbacked), zf0 / zuf0 (floats).
const LazyRE2 kSymbolRe = {R"re(\b((?:s|u|zf|zuf)\d+)\b)re"};
// A sympy function the Python of an assertion cannot call: Mod, FloorDiv, PythonMod, Max...
const LazyRE2 kSympyCallRe = {R"re(\b[A-Z]\w*\()re"};

// The sympy symbols `text` names, in order, repeats included.
std::vector<std::string> SymbolsIn(absl::string_view text) {
  re2::StringPiece rest(text.data(), text.size());
  std::string symbol;
  std::vector<std::string> symbols;
  while (RE2::FindAndConsume(&rest, *kSymbolRe, &symbol)) symbols.push_back(symbol);
  return symbols;
}

bool IsTruthValue(absl::string_view result) { return result == "True" || result == "False"; }

bool IsIdentifierChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

// The innermost user frame of an export record: of its user_stack where torch logged one, else of
// its whole stack.
const v1::StackFrame* UserFrame(const Frames& user_stack, const Frames& stack) {
  if (const v1::StackFrame* frame = InnermostUserFrame(user_stack)) return frame;
  return InnermostUserFrame(stack);
}

std::string CodeOf(const v1::SessionCapture& capture, const v1::StackFrame& frame) {
  if (!frame.code().empty()) return std::string(absl::StripAsciiWhitespace(frame.code()));
  return SourceLine(capture, frame.file(), frame.line());
}

// The one name a line assigns to: "n" for `n = budget.item()`; empty for `a, b = ...`.
std::string AssignedName(absl::string_view code) {
  static const LazyRE2 kAssignRe = {R"re(^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=])re"};
  std::string name;
  RE2::PartialMatch(re2::StringPiece(code.data(), code.size()), *kAssignRe, &name);
  return name;
}

// `text` with every whole-word occurrence of `from` (bounded by no identifier character) replaced.
std::string ReplaceWhole(absl::string_view text, absl::string_view from, absl::string_view to) {
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t hit = text.find(from, at);
    if (hit == absl::string_view::npos) break;
    const size_t end = hit + from.size();
    const bool bounded =
        (hit == 0 || !IsIdentifierChar(text[hit - 1]) || !IsIdentifierChar(from.front())) &&
        (end == text.size() || !IsIdentifierChar(text[end]) || !IsIdentifierChar(from.back()));
    absl::StrAppend(&out, text.substr(at, hit - at), bounded ? to : from);
    at = end;
  }
  absl::StrAppend(&out, text.substr(at));
  return out;
}

bool MentionsWord(absl::string_view text, absl::string_view word) {
  return !word.empty() && ReplaceWhole(text, word, "") != text;
}

// A data-dependent symbol and the user line that made it.
struct Origin {
  uint64_t line = 0;  // its record's line in the log
  const v1::StackFrame* frame = nullptr;
  std::string code;
  std::string user_name;
};

// Each symbol name's origins in log order: every export numbers its symbols from u0 again.
class Origins {
 public:
  void Add(const std::string& name, Origin origin) {
    if (origin.frame != nullptr)
      first_at_.try_emplace(absl::StrCat(origin.frame->file(), ":", origin.frame->line()), name);
    by_name_[name].push_back(std::move(origin));
  }
  // The first symbol the line that made `origin` made: the first trace's u2 for the second's u5.
  const std::string* FirstAt(const Origin& origin) const {
    if (origin.frame == nullptr) return nullptr;
    auto it = first_at_.find(absl::StrCat(origin.frame->file(), ":", origin.frame->line()));
    return it == first_at_.end() ? nullptr : &it->second;
  }
  // The latest origin of `name` made before log line `line`; null when none.
  const Origin* Before(const std::string& name, uint64_t line) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return nullptr;
    const Origin* latest = nullptr;
    for (const Origin& o : it->second) {
      if (o.line < line) latest = &o;
    }
    return latest;
  }

 private:
  absl::flat_hash_map<std::string, std::vector<Origin>> by_name_;
  absl::flat_hash_map<std::string, std::string> first_at_;  // "file:line" -> its first symbol
};

// `expr` in the user's names: a local whose value (torch's text of it) appears whole stands for
// it; a symbol the line that made it named stands for itself where the decision's line still
// means that name (its locals say so, or, with none logged, its code uses the name).
std::string InUserNames(absl::string_view expr, const v1::ExportIssue& issue,
                        absl::string_view decision_code, const Origins& origins) {
  std::string out(expr);
  std::vector<std::pair<std::string, std::string>> locals;  // value, name
  for (const auto& [name, value] : issue.locals()) {
    if (value.empty() || absl::StartsWith(value, "Tensor(") ||
        !RE2::PartialMatch(value, *kSymbolRe))
      continue;
    locals.emplace_back(value, name);
  }
  // The longest first, so that `(((-u0)//3)) + 5` is one name and not a name inside another.
  std::sort(locals.begin(), locals.end(), [](const auto& a, const auto& b) {
    return a.first.size() != b.first.size() ? a.first.size() > b.first.size() : a < b;
  });
  for (const auto& [value, name] : locals) out = ReplaceWhole(out, value, name);
  const std::vector<std::string> symbols = SymbolsIn(out);
  for (const std::string& s : symbols) {
    const Origin* origin = origins.Before(s, issue.line());
    if (origin == nullptr || origin->user_name.empty()) continue;
    const std::string& name = origin->user_name;
    auto local = issue.locals().find(name);
    const bool still_means_it = issue.locals().empty()
                                    ? MentionsWord(decision_code, name)
                                    : local != issue.locals().end() && local->second == s;
    if (still_means_it) out = ReplaceWhole(out, s, name);
  }
  // A symbol left in torch's name goes by the first trace's name for it.
  for (const std::string& s : symbols) {
    const Origin* origin = origins.Before(s, issue.line());
    const std::string* first = origin != nullptr ? origins.FirstAt(*origin) : nullptr;
    if (first != nullptr && *first != s) out = ReplaceWhole(out, s, *first);
  }
  return out;
}

// `expr` with each data-dependent symbol named by the user line that made it: torch traces an
// export twice, and the second trace's u5 is the first's u2 when the same line made both.
std::string SymbolsByOrigin(absl::string_view expr, uint64_t line, const Origins& origins) {
  std::string out(expr);
  for (const std::string& s : SymbolsIn(expr)) {
    const Origin* origin = origins.Before(s, line);
    if (origin == nullptr || origin->frame == nullptr) continue;
    const v1::StackFrame& frame = *origin->frame;
    out = ReplaceWhole(out, s, absl::StrCat("<", frame.file(), ":", frame.line(), ">"));
  }
  return out;
}

// The top-level arguments of `call` ("Eq(a, b)" → {"a", "b"}) when it is one call of `fn`.
bool SplitCall(absl::string_view text, absl::string_view fn, std::string* a, std::string* b) {
  if (!absl::StartsWith(text, fn) || text.size() < fn.size() + 2 || text[fn.size()] != '(' ||
      text.back() != ')')
    return false;
  const absl::string_view inner = text.substr(fn.size() + 1, text.size() - fn.size() - 2);
  int depth = 0;
  for (size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') {
      if (--depth < 0) return false;  // "Eq(a, b) + f(c)": the parenthesis closes early
    }
    if (c == ',' && depth == 0) {
      *a = std::string(absl::StripAsciiWhitespace(inner.substr(0, i)));
      *b = std::string(absl::StripAsciiWhitespace(inner.substr(i + 1)));
      return !a->empty() && !b->empty() && b->find(',') == std::string::npos;
    }
  }
  return false;
}

// The relational operator at the top level of `text` (outside parentheses): its position and
// spelling; npos when none.
std::pair<size_t, absl::string_view> TopLevelRelation(absl::string_view text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth != 0) continue;
    for (absl::string_view op : {">=", "<=", "==", "!="}) {
      if (text.substr(i, 2) == op) return {i, op};
    }
    if ((c == '<' || c == '>') && (i + 1 >= text.size() || text[i + 1] != c) &&
        (i == 0 || text[i - 1] != c))
      return {i, text.substr(i, 1)};
  }
  return {absl::string_view::npos, ""};
}

absl::string_view Negated(absl::string_view op) {
  if (op == "<") return ">=";
  if (op == "<=") return ">";
  if (op == ">") return "<=";
  if (op == ">=") return "<";
  if (op == "==") return "!=";
  return "==";
}

// An operator of torch's own libraries (aten.select.int, prims.view_of.default): its fake
// kernels are torch's.
bool IsTorchsOwnOp(absl::string_view op) {
  return absl::StartsWith(op, "aten.") || absl::StartsWith(op, "prims.");
}

// The fake-kernel registration name of an operator overload: "mylib.foo.default" → "mylib::foo".
std::string OpQualname(absl::string_view op) {
  const size_t dot = op.find('.');
  if (dot == absl::string_view::npos) return std::string(op);
  absl::string_view name = op.substr(dot + 1);
  if (const size_t overload = name.find('.'); overload != absl::string_view::npos)
    name = name.substr(0, overload);
  return absl::StrCat(op.substr(0, dot), "::", name);
}

// Adds `symbol`, made at `origin`, to `f`, once per line that made one (a retrace makes u5 where
// the first trace made u2, at the same line); `done` holds the lines `f` has.
void AddSymbol(const v1::SessionCapture& capture, const std::string& symbol, const Origin& origin,
               absl::flat_hash_set<std::string>& done, v1::ExportFinding* f) {
  const std::string where = origin.frame != nullptr
                                ? absl::StrCat(origin.frame->file(), ":", origin.frame->line())
                                : symbol;
  if (!done.insert(absl::StrCat("symbol ", where)).second) return;
  v1::ExportSymbol* s = f->add_symbols();
  s->set_name(symbol);
  s->set_user_name(origin.user_name);
  s->set_code(origin.code);
  if (origin.frame != nullptr) {
    *s->mutable_location() =
        MakeLocation(capture.session(), origin.frame->file(), origin.frame->line());
  }
}

// What to do about a size declared dynamic that the code decides on or pins.
constexpr absl::string_view kStaticOrGeneric =
    "declare it static in dynamic_shapes (Dim.AUTO lets export choose); if it varies, make this "
    "line size-generic";
// What to do about a fake kernel of torch's own.
constexpr absl::string_view kTorchsOwnOp =
    "The operator is torch's, not one to register: write this line with other ops";
constexpr absl::string_view kReportToPyTorch = ", or report it to PyTorch with this log.";

std::string Remedy(const v1::ExportFinding& f, const v1::ExportIssue& first) {
  switch (f.kind()) {
    case v1::ExportFinding::DATA_DEPENDENT: {
      const bool compiled = !f.compile_id().empty();
      const absl::string_view program = compiled ? "compiled graph" : "exported program";
      std::string text;
      bool any_fact = false;  // a decision of a fact (True / False), not of a value
      for (const v1::ExportDecision& d : f.decisions()) {
        if (IsTruthValue(d.result())) {
          any_fact = true;
        } else if (text.empty()) {
          absl::StrAppend(&text, "Here torch needed the value of `", d.expr(),
                          "` itself, not a fact about it, and fixed it at the example's ",
                          d.result(), ": the ", program,
                          " is only right for that value. Keep it a tensor where it is used "
                          "(index_copy_, index_select, gather or a mask rather than a Python int "
                          "index).");
        }
      }
      if (!any_fact) return text;
      const bool any_check = std::any_of(f.decisions().begin(), f.decisions().end(),
                                         [](const auto& d) { return !d.check().empty(); });
      absl::StrAppend(
          &text, text.empty() ? "" : " ", compiled ? "torch" : "Export",
          " could not decide this from shapes alone, so it took what the example inputs gave, and "
          "the ",
          program,
          " asserts it at run time: an input for which it is false raises \"Runtime assertion "
          "failed\" rather than computing. Where it holds for every input, state it before this "
          "line",
          any_check ? " (the torch._check calls above)" : " with torch._check",
          " and torch proves it rather than guessing; where it can be false, the code must not "
          "decide on it (torch.cond takes both branches).");
      return text;
    }
    case v1::ExportFinding::GUARD_EVALUATED: {
      std::vector<std::string> sources;
      for (const auto& [symbol, source] : first.symbol_sources()) {
        if (RE2::PartialMatch(first.expr(), *kSymbolRe) && MentionsWord(first.expr(), symbol))
          sources.push_back(absl::StrCat(symbol, " is ", source));
      }
      std::sort(sources.begin(), sources.end());
      return absl::StrCat(
          "This line made export decide `", first.expr(), "` on a size declared dynamic",
          sources.empty() ? "" : absl::StrCat(" (", absl::StrJoin(sources, ", "), ")"),
          ": the exported program is only right where it holds. If that size is really fixed, ",
          kStaticOrGeneric, ".");
    }
    case v1::ExportFinding::TRACE_FAILED: {
      std::vector<std::string> made;
      for (const v1::ExportSymbol& symbol : f.symbols()) {
        made.push_back(absl::StrCat(symbol.user_name().empty() ? symbol.name() : symbol.user_name(),
                                    " at ", symbol.location().file(), ":",
                                    symbol.location().line()));
      }
      return absl::StrCat(
          "torch raised while tracing this line",
          f.op().empty() ? "" : absl::StrCat(" (", f.op(), ")"),
          ", and nothing was exported. A non-strict trace logs the graph it had made, not the "
          "error: run the export again to read the exception, or torch.export.draft_export to "
          "trace past it and list what it could not decide.",
          made.empty() ? ""
                       : absl::StrCat(" The trace had made data-dependent values (",
                                      absl::StrJoin(made, ", "),
                                      "): a size or a branch that depends on one is the usual "
                                      "cause; state what holds with torch._check(...) before "
                                      "this line."));
    }
    case v1::ExportFinding::SPECIALIZED: {
      auto source = first.symbol_sources().find(first.expr());
      return absl::StrCat(
          "This line made a size declared dynamic a constant: `", first.expr(), "`",
          source == first.symbol_sources().end() ? "" : absl::StrCat(" (", source->second, ")"),
          " can only be ", first.result(), " here",
          first.reason().empty() ? "" : absl::StrCat(" (", first.reason(), ")"),
          ". torch.export refuses the dim as dynamic, and draft export exported it static: the "
          "program takes only that size. If the size is really fixed, ",
          kStaticOrGeneric,
          ": a shape read from the input (x.shape[0], or -1) rather than a "
          "constant.");
    }
    case v1::ExportFinding::MISSING_FAKE_KERNEL:
      if (IsTorchsOwnOp(f.op())) {
        return absl::StrCat("torch has no fake kernel for its own ", f.op(),
                            ", so export ran it on the real example inputs and took their output "
                            "shapes as given. ",
                            kTorchsOwnOp, kReportToPyTorch);
      }
      return absl::StrCat(
          "torch.ops.", f.op(),
          " has no fake kernel, so export ran it on the real example inputs and took their "
          "output shapes as given: the exported program is only right for inputs of those "
          "shapes. Register one: @torch.library.register_fake(\"",
          OpQualname(f.op()),
          "\") on a function that returns empty tensors of the output's shape "
          "(torch.library.get_ctx().new_dynamic_size() for a size that depends on the data).");
    case v1::ExportFinding::MISMATCHED_FAKE_KERNEL:
      if (IsTorchsOwnOp(f.op())) {
        // aten's fake kernels are torch's: nothing for the user to register or fix.
        return absl::StrCat(
            "torch's own fake kernel for ", f.op(),
            " disagrees with the real kernel on these inputs",
            f.reason().empty() ? "" : absl::StrCat(" (", f.reason(), ")"),
            f.stopped() ? ": torch cannot infer a fake kernel from the real one for a result with "
                          "a storage offset, so the export stops with an error here. "
                        : ", and draft export used the real kernel's outputs. ",
            kTorchsOwnOp,
            " (a view of a data-dependent result is the usual cause: index_select or gather in "
            "place of basic indexing)",
            kReportToPyTorch);
      }
      return absl::StrCat(
          "torch.ops.", f.op(), "'s fake kernel disagrees with the real one",
          f.reason().empty() ? "" : absl::StrCat(" (", f.reason(), ")"),
          ", and export used the real kernel's outputs. Fix the fake kernel "
          "registered for ",
          OpQualname(f.op()),
          " so that its outputs have the real kernel's shapes, strides and dtypes.");
    default:
      return "";
  }
}

}  // namespace

std::string ExportAssertion(absl::string_view expr, absl::string_view result) {
  expr = absl::StripAsciiWhitespace(expr);
  const bool is_true = result == "True", is_false = result == "False";
  std::string a, b;
  const bool eq = SplitCall(expr, "Eq", &a, &b);
  if (eq || SplitCall(expr, "Ne", &a, &b)) {
    // sympy writes `Eq(16, u2)` as readily as `Eq(u2, 16)`: the number goes on the right.
    double number;
    if (absl::SimpleAtod(a, &number) && !absl::SimpleAtod(b, &number)) std::swap(a, b);
    return absl::StrCat(a, eq == is_false ? " != " : " == ", b);
  }
  if (const auto [at, op] = TopLevelRelation(expr); at != absl::string_view::npos) {
    if (!is_false) return std::string(expr);
    return absl::StrCat(absl::StripTrailingAsciiWhitespace(expr.substr(0, at)), " ", Negated(op),
                        " ", absl::StripLeadingAsciiWhitespace(expr.substr(at + op.size())));
  }
  if (is_true) return std::string(expr);
  if (is_false) return absl::StrCat("not (", expr, ")");
  return absl::StrCat(expr, " == ", result);
}

void AddExportFindings(const v1::SessionCapture& capture, v1::FailuresSection* section) {
  if (capture.export_issues().empty()) return;
  Origins origins;
  for (const v1::Symbol& symbol : capture.export_symbols()) {
    Origin origin;
    origin.line = symbol.line();
    origin.frame = UserFrame(symbol.user_stack(), symbol.stack());
    if (origin.frame != nullptr) {
      origin.code = CodeOf(capture, *origin.frame);
      origin.user_name = AssignedName(origin.code);
    }
    origins.Add(symbol.name(), std::move(origin));
  }

  absl::flat_hash_map<std::string, const v1::Frame*> compiled_frames;  // compile id -> frame
  {
    absl::flat_hash_map<uint32_t, const v1::Frame*> frames;
    for (const v1::Frame& frame : capture.frames()) frames.emplace(frame.id(), &frame);
    for (const v1::Compile& c : capture.compiles()) {
      if (auto it = frames.find(c.frame_id()); it != frames.end() && !it->second->file().empty())
        compiled_frames.emplace(c.id(), it->second);
    }
  }
  absl::flat_hash_map<std::string, int> finding_of;  // kind and user line, or op -> index
  absl::flat_hash_map<int, absl::flat_hash_set<std::string>> seen;  // decisions, symbol lines
  absl::flat_hash_map<int, const v1::ExportIssue*> first_issue;
  uint64_t trace_began = 0;  // the log line of the last failed trace: the next one's start
  for (const v1::ExportIssue& issue : capture.export_issues()) {
    // Under a compile, torch's stack is Dynamo's own and the call site's, never the traced line.
    const v1::StackFrame* frame = issue.compile_id().empty() || !issue.user_stack().empty()
                                      ? UserFrame(issue.user_stack(), issue.stack())
                                      : nullptr;
    const std::string code = frame != nullptr ? CodeOf(capture, *frame) : "";
    const bool fake_kernel = issue.kind() == v1::ExportIssue::MISSING_FAKE_KERNEL ||
                             issue.kind() == v1::ExportIssue::MISMATCHED_FAKE_KERNEL;
    // Under torch.compile (fake_tensor_propagate_real_tensors) the records name their compile and
    // no user frame: Dynamo traces the bytecode, so the compiled frame stands for the line.
    v1::StackFrame compiled_frame;
    if (frame == nullptr && !issue.compile_id().empty()) {
      if (auto c = compiled_frames.find(issue.compile_id()); c != compiled_frames.end()) {
        compiled_frame.set_file(c->second->file());
        compiled_frame.set_line(c->second->line());
        frame = &compiled_frame;
      }
    }
    const std::string key =
        fake_kernel        ? absl::StrCat(issue.kind(), " ", issue.op(), " ", issue.reason())
        : frame != nullptr ? absl::StrCat(issue.kind(), " ", frame->file(), ":", frame->line(), " ",
                                          issue.compile_id())
                           : absl::StrCat(issue.kind(), " ", issue.expr());
    auto [it, added] = finding_of.try_emplace(key, section->export_findings_size());
    if (added) section->add_export_findings();
    v1::ExportFinding* f = section->mutable_export_findings(it->second);
    if (added) {
      first_issue[it->second] = &issue;
      f->set_kind(static_cast<v1::ExportFinding::Kind>(issue.kind()));
      if (frame != nullptr)
        *f->mutable_location() = MakeLocation(capture.session(), frame->file(), frame->line());
      f->set_code(code);
      f->set_op(issue.op());
      f->set_reason(issue.reason());
      f->set_compile_id(issue.compile_id());
      // torch infers a fake kernel from the real one, except for a result that is a view with a
      // storage offset: fake_tensor.py's inference refuses it, and the export raises.
      f->set_stopped(issue.kind() == v1::ExportIssue::TRACE_FAILED ||
                     (issue.kind() == v1::ExportIssue::MISMATCHED_FAKE_KERNEL &&
                      IsTorchsOwnOp(issue.op()) &&
                      absl::StrContains(issue.reason(), "storage offset")));
    }
    f->set_records(f->records() + 1);
    if (fake_kernel) continue;
    if (issue.kind() == v1::ExportIssue::TRACE_FAILED) {
      // The data-dependent symbols this trace had made: the usual cause of a failed trace.
      for (const v1::Symbol& symbol : capture.export_symbols()) {
        if (symbol.line() <= trace_began || symbol.line() >= issue.line()) continue;
        if (const Origin* o = origins.Before(symbol.name(), issue.line()))
          AddSymbol(capture, symbol.name(), *o, seen[it->second], f);
      }
      trace_began = issue.line();
      continue;
    }

    const std::string named = InUserNames(issue.expr(), issue, code, origins);
    absl::flat_hash_set<std::string>& done = seen[it->second];
    const std::string assertion = ExportAssertion(named, issue.result());
    if (done.insert(absl::StrCat("decision ", SymbolsByOrigin(assertion, issue.line(), origins)))
            .second) {
      v1::ExportDecision* d = f->add_decisions();
      d->set_expr(named);
      d->set_result(issue.result());
      if (issue.kind() == v1::ExportIssue::SPECIALIZED) d->set_assertion(assertion);
      if (issue.kind() == v1::ExportIssue::DATA_DEPENDENT) {
        d->set_assertion(assertion);
        // A value torch needed itself (an int index) was fixed, not a fact about it asserted:
        // stating `pos == 3` would fix it in the user's code too.
        if (IsTruthValue(issue.result()) && !RE2::PartialMatch(d->assertion(), *kSymbolRe) &&
            !RE2::PartialMatch(d->assertion(), *kSympyCallRe))
          d->set_check(absl::StrCat("torch._check(", d->assertion(), ")"));
      }
    }
    // The data-dependent symbols the decision reads, once per line that made one (a retrace
    // makes u5 where the first trace made u2, at the same line).
    for (const std::string& symbol : SymbolsIn(issue.expr())) {
      if (const Origin* origin = origins.Before(symbol, issue.line()))
        AddSymbol(capture, symbol, *origin, done, f);
    }
  }
  for (int i = 0; i < section->export_findings_size(); ++i) {
    v1::ExportFinding* f = section->mutable_export_findings(i);
    f->set_remedy(Remedy(*f, *first_issue[i]));
  }
}

}  // namespace cl
