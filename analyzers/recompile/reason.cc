#include "analyzers/recompile/reason.h"

#include <string.h>

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analyzers/common/location.h"
#include "analyzers/recompile/first_match.h"
#include "re2/re2.h"

namespace cl {
namespace {

using Category = v1::RecompileCategory;

re2::StringPiece Piece(absl::string_view s) { return re2::StringPiece(s.data(), s.size()); }

// The named groups of one successful RE2 match. RE2's positional interface would force every
// rule of the table below into its own call; named groups keep the table declarative.
class Match {
 public:
  static std::optional<Match> Run(const RE2& re, absl::string_view text, bool whole) {
    Match m(re);
    const auto anchor = whole ? RE2::ANCHOR_BOTH : RE2::UNANCHORED;
    if (!re.Match(Piece(text), 0, text.size(), anchor, m.groups_.data(),
                  static_cast<int>(m.groups_.size()))) {
      return std::nullopt;
    }
    return m;
  }

  // The text of group `name`, empty when the group did not take part in the match.
  std::string Get(const char* name) const {
    const auto& names = re_->NamedCapturingGroups();
    auto it = names.find(name);
    if (it == names.end() || groups_[it->second].data() == nullptr) return "";
    return std::string(groups_[it->second].data(), groups_[it->second].size());
  }

 private:
  explicit Match(const RE2& re) : re_(&re), groups_(re.NumberOfCapturingGroups() + 1) {}

  const RE2* re_;
  std::vector<re2::StringPiece> groups_;
};

// §1.5 Step E: the ordered rule table; the first rule that matches wins. `whole` rules must match
// the entire check, the others anywhere in it. The patterns capture `var`, `axis` (a dimension),
// `expected` and `actual` where the text has them; Refine() below handles each rule's specifics.
struct RuleSpec {
  const char* rule;
  Category::Value category;
  bool whole;
  const char* pattern;
};

constexpr RuleSpec kRuleSpecs[] = {
    {"size", Category::SIZE, true,
     R"re((?:tensor '(?P<var>.+?)' )?size mismatch at index (?P<axis>\d+)\. expected (?P<expected>-?\d+), actual (?P<actual>-?\d+))re"},
    // Old torchdynamo wrote "strides mismatch".
    {"stride", Category::STRIDE, true,
     R"re((?:tensor '(?P<var>.+?)' )?strides? mismatch at index (?P<axis>\d+)\. expected (?P<expected>-?\d+), actual (?P<actual>-?\d+))re"},
    {"rank", Category::SIZE, true,
     R"re(tensor '(?P<var>.+?)' rank mismatch\. expected (?P<expected>\d+), actual (?P<actual>\d+))re"},
    {"dtype", Category::DTYPE, true,
     R"re(tensor '(?P<var>.+?)' dtype mismatch\. expected (?P<expected>\w+), actual (?P<actual>\w+))re"},
    {"device_index", Category::DEVICE, true,
     R"re(tensor '(?P<var>.+?)' Tensor device index mismatch\. Expected device index to be (?P<expected>-?\d+), actual (?P<actual>-?\d+))re"},
    {"dispatch_key", Category::DEVICE, true,
     R"re(tensor '(?P<var>.+?)' dispatch key set mismatch\.(?: expected (?P<expected>DispatchKeySet\([^)]*\)), actual (?P<actual>DispatchKeySet\([^)]*\)))?)re"},
    {"requires_grad", Category::REQUIRES_GRAD, true,
     R"re(tensor '(?P<var>.+?)' requires_grad mismatch\. expected requires_grad=(?P<expected>[01]))re"},
    // Three texts over the versions; the old two carry a stray quote from the C++ source.
    {"tensor_type", Category::TYPE, true,
     R"re(expected type of '(?P<var>.+?)' to be (?:a tensor type, ' but found|(?P<expected><class '[^']+'>), but found) (?P<actual><class '[^']+'>))re"},
    {"type_id", Category::TYPE, true,
     R"re(___check_type_id\((?P<var>.+?), (?P<id>\d+)\)(?:, type=(?P<expected><class '[^']+'>))?)re"},
    // Torch could not read an attribute its guards read on the entry's object: the new object is
    // of another kind (a builtin such as torch.relu has no `__code__`, a lambda does).
    {"getattr_failed", Category::TYPE, true,
     R"re(getattr failed on source (?P<var>.+?)\.[A-Za-z_]\w*)re"},
    {"obj_id", Category::IDENTITY, true,
     R"re(___check_obj_id\((?P<var>.+?), (?P<id>\d+)\)(?:, type=(?P<expected><class '[^']+'>))?)re"},
    {"global_state", Category::GLOBAL_STATE, true,
     R"re(GLOBAL_STATE changed:\s*(?P<var>[\w ]*?)\s*)re"},
    {"global_flag", Category::GLOBAL_STATE, true,
     R"re((?P<negated>not )?(?P<var>___check_global_state|___is_grad_enabled|___are_deterministic_algorithms_enabled|___is_torch_function_enabled|___check_torch_function_mode_stack)\(\))re"},
    {"default_device", Category::GLOBAL_STATE, true,
     R"re(utils_device\.CURRENT_DEVICE == (?P<expected>.+))re"},
    {"backend", Category::BACKEND_CONFIG, true,
     R"re(\(?(?:___skip_backend_check\(\) or ___current_backend\(\) == ___lookup_backend\(\d+\)|___check_current_backend\(\d+\)|___compile_config_hash\(\) == '(?P<expected>\w+)'|not ___needs_nopython\(\))\)?|BACKEND_MATCH failure.*)re"},
    {"aliasing", Category::ALIASING, true,
     R"re(Duplicate tensors? found.*|check_overlapping\(.*\)|(?P<a>[\w.\[\]']+) is (?P<b>[\w.\[\]']+))re"},
    {"length", Category::VALUE, true,
     R"re((?:len|___tuple_iterator_len)\((?P<var>.+?)\) == (?P<expected>\d+))re"},
    // Torch's length guard on an empty list, tuple or dict (SEQUENCE_LENGTH): "not G['history']".
    // Read as the length guard it is, "len(G['history']) == 0", so that a list the code appends to
    // shows all its lengths, from 0.
    {"empty", Category::VALUE, true, R"re(^not (?P<var>[A-Za-z_][^\s(]*)$)re"},
    {"dynamic_marker", Category::SYMBOLIC_SHAPE, true,
     R"re((?:not )?hasattr\((?P<var>.+?), '_dynamo_dynamic_indices'\)(?: == (?P<expected>True|False))?)re"},
    {"symbolic", Category::SYMBOLIC_SHAPE, false,
     R"re(\.size\(\)\[\d+\]|\.stride\(\)\[\d+\]|\.storage_offset\(\)|\b(?:Eq|Ne|Mod|FloorDiv|PythonMod|Max|Min)\()re"},
    // A relation on arithmetic of a dynamic int or float (a SymInt / SymFloat from automatic
    // dynamic): "((1 + self.step) / 4) <= 1.0", from `min(1.0, self.step / 4)`. A plain value
    // guard ("self.step == 0") has no arithmetic, and stays `value`.
    {"symbolic_value", Category::SYMBOLIC_SHAPE, true,
     R"re((?:[\w.\[\]'() ]*?[\w)\]] *[-+*/%] *[\w.(\[][\w.\[\]'() +\-*/%]*?|-?[\d.]+) *(?:<=|<|>=|>|==|!=) *(?:-?[\d.]+|[\w.\[\]'() ]*?[\w)\]] *[-+*/%] *[\w.(\[][\w.\[\]'() +\-*/%]*?))re"},
    {"container_keys", Category::CONTAINER, false,
     R"re(___dict_contains\(|^set\(.*\.keys\(\)\) == |^set\.__contains__\()re"},
    {"hasattr", Category::CONTAINER, true,
     R"re((?:not )?hasattr\((?P<var>.+?), '(?P<expected>[^']+)'\))re"},
    {"module_state", Category::CONTAINER, false, R"re(^__nn_module_guard_\d+\((?P<var>[^,)]+))re"},
    {"transform_state", Category::GLOBAL_STATE, false,
     R"re(^torch\._functorch\.pyfunctorch\.compare_functorch_state\()re"},
    {"data_ptr", Category::IDENTITY, true,
     R"re((?P<var>.+?)\.data_ptr\(\) == (?P<expected>\d+))re"},
    {"value", Category::VALUE, true, R"re((?P<var>.+?) == (?P<expected>.+))re"},
    {"unknown", Category::UNKNOWN, true, R"re(|Unexpected recompilation.*)re"},
};

// kRuleSpecs, compiled as one set; each rule's own RE2 (for its captures) when it first matches.
const FirstMatch& Rules() {
  static const FirstMatch* const kRules = [] {
    std::vector<FirstMatch::Pattern> patterns;
    for (const RuleSpec& spec : kRuleSpecs) patterns.push_back({spec.pattern, spec.whole});
    return new FirstMatch(patterns);
  }();
  return *kRules;
}

bool EndsWithTraining(absl::string_view var) { return absl::EndsWith(var, ".training"); }

// The quoted strings of a Python literal ("['a', \"b 'c'\"]" → a, b 'c'), for the oldest
// formats that printed guard lists with repr().
std::vector<std::string> PythonStringLiterals(absl::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char quote = text[i];
    if (quote != '\'' && quote != '"') continue;
    std::string literal;
    size_t j = i + 1;
    for (; j < text.size() && text[j] != quote; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) ++j;
      literal.push_back(text[j]);
    }
    out.push_back(std::move(literal));
    i = j;
  }
  return out;
}

// "DispatchKeySet(CPU, BackendSelect)" → {"BackendSelect", "CPU"}.
std::vector<std::string> DispatchKeys(absl::string_view set) {
  absl::ConsumePrefix(&set, "DispatchKeySet(");
  absl::ConsumeSuffix(&set, ")");
  std::vector<std::string> keys = absl::StrSplit(set, ", ", absl::SkipWhitespace());
  std::sort(keys.begin(), keys.end());
  return keys;
}

// §1.5 rule 6: what a dispatch-key change means. Backend keys differ → the tensor changed device
// type; otherwise (ADInplaceOrView from inference_mode, Python / Functionalize / FuncTorch keys
// from modes and subclasses) the tensor was created under different global state. Old builds
// print no key sets; a device-type change is by far the most common cause then.
Category::Value DispatchKeyCategory(absl::string_view expected, absl::string_view actual) {
  if (expected.empty() || actual.empty()) return Category::DEVICE;
  static const LazyRE2 kBackendKey = {
      R"re((?:Sparse|SparseCsr|Quantized|Nested|Autograd|AutocastAutograd)?(?:CPU|CUDA|HIP|Meta|HPU|XPU|MPS|PrivateUse1|Lazy|XLA|MTIA|IPU|VE|MAIA))re"};
  // An autograd key alone (`AutogradCPU`, with `CPU` in both sets) comes and goes with
  // inference_mode, not with the device.
  const std::vector<std::string> a = DispatchKeys(expected), b = DispatchKeys(actual);
  auto in_both = [&](absl::string_view key) {
    return std::binary_search(a.begin(), a.end(), key) &&
           std::binary_search(b.begin(), b.end(), key);
  };
  for (const std::string& key : DispatchKeysDiffering(expected, actual)) {
    if (!RE2::FullMatch(key, *kBackendKey)) continue;
    absl::string_view backend = key;
    const bool autograd = absl::ConsumePrefix(&backend, "AutocastAutograd") ||
                          absl::ConsumePrefix(&backend, "Autograd");
    if (!autograd || !in_both(backend)) return Category::DEVICE;
  }
  return Category::GLOBAL_STATE;
}

// Fills in what each rule's pattern cannot express on its own.
void Refine(const Match& m, GuardFailure* f) {
  const std::string& rule = f->rule;
  if (rule == "requires_grad") {
    // Torch prints only the expected flag; the actual one is its negation.
    f->actual.assign(1, f->expected == "0" ? '1' : '0');
  } else if (rule == "tensor_type" && f->expected.empty()) {
    f->expected = "a tensor";
  } else if (rule == "dispatch_key") {
    f->category = DispatchKeyCategory(f->expected, f->actual);
  } else if (rule == "obj_id") {
    // Bools and None are ID-matched, so a flag flip shows up as an identity guard.
    if (EndsWithTraining(f->variable)) {
      f->category = Category::MODULE_MODE;
    } else if (f->expected == "<class 'bool'>" || f->expected == "<class 'NoneType'>") {
      f->category = Category::VALUE;
    }
  } else if (rule == "global_state") {
    std::vector<absl::string_view> fields = absl::StrSplit(f->variable, ' ', absl::SkipEmpty());
    f->variable = fields.empty() ? "global_state" : absl::StrJoin(fields, ", ");
  } else if (rule == "global_flag") {
    static const auto* const kNames = new std::vector<std::pair<std::string, std::string>>{
        {"___is_grad_enabled", "grad_mode"},
        {"___are_deterministic_algorithms_enabled", "deterministic_algorithms"},
        {"___is_torch_function_enabled", "torch_function"},
        {"___check_torch_function_mode_stack", "torch_function_mode_stack"},
        {"___check_global_state", "global_state"}};
    for (const auto& [fn, name] : *kNames) {
      if (f->variable != fn) continue;
      f->variable = name;
      // A boolean flag guard failing means the flag now has the other value.
      if (name != "global_state" && name != "torch_function_mode_stack") {
        const bool negated = !m.Get("negated").empty();
        f->expected = negated ? "False" : "True";
        f->actual = negated ? "True" : "False";
      }
      break;
    }
  } else if (rule == "default_device") {
    f->variable = "default_device";
  } else if (rule == "backend") {
    f->variable = absl::StrContains(f->check, "___compile_config_hash") ? "dynamo_config"
                  : absl::StrContains(f->check, "___needs_nopython")    ? "fullgraph"
                                                                        : "backend";
  } else if (rule == "aliasing") {
    static const LazyRE2 kDuplicateRe = {
        R"re(^Duplicate tensor found where not expected! (.+?)should not alias)re"};
    static const LazyRE2 kOverlapRe = {
        R"re(^check_overlapping\(overlapping=\[(.*)\], non_overlapping=)re"};
    if (std::string a = m.Get("a"); !a.empty()) {
      f->variable = a + ", " + m.Get("b");
    } else if (absl::StartsWith(f->check, "Duplicate tensors found")) {
      f->variable = absl::StrJoin(PythonStringLiterals(f->check), ", ");
    } else if (!RE2::PartialMatch(f->check, *kDuplicateRe, &f->variable)) {
      RE2::PartialMatch(f->check, *kOverlapRe, &f->variable);
    }
  } else if (rule == "symbolic") {
    static const LazyRE2 kDimRe = {R"re(([\w.\[\]'"]+?)\.(?:size|stride)\(\)\[(\d+)\])re"};
    static const LazyRE2 kOffsetRe = {R"re(([\w.\[\]'"]+?)\.storage_offset\(\))re"};
    if (!RE2::PartialMatch(f->check, *kDimRe, &f->variable, &f->dim)) {
      RE2::PartialMatch(f->check, *kOffsetRe, &f->variable);
    }
    // The relation itself is the expectation: "2 <= x[0]", "Eq(x[0], 5)".
    static const LazyRE2 kSizeCallRe = {R"re(\.size\(\)\[(\d+)\])re"};
    f->expected = f->check;
    RE2::GlobalReplace(&f->expected, *kSizeCallRe, R"re([\1])re");
  } else if (rule == "symbolic_value") {
    // The value is the first name in the relation; the relation itself is the expectation.
    static const LazyRE2 kNameRe = {R"re(([A-Za-z_][\w.]*(?:\[[^\]]+\])*))re"};
    RE2::PartialMatch(f->check, *kNameRe, &f->variable);
    f->expected = f->check;
  } else if (rule == "empty") {
    f->rule = "length";
    f->expected = "0";
  } else if (rule == "container_keys") {
    static const LazyRE2 kKeysRe = {R"re(^set\((.*)\.keys\(\)\) == )re"};
    static const LazyRE2 kSetContainsRe = {R"re(^set\.__contains__\(([^,]+), (.*)\)$)re"};
    static const LazyRE2 kDictContainsRe = {R"re(___dict_contains\(([^,]+), ([^)]+)\))re"};
    if (!RE2::PartialMatch(f->check, *kKeysRe, &f->variable) &&
        !RE2::PartialMatch(f->check, *kSetContainsRe, &f->variable, &f->expected)) {
      RE2::PartialMatch(f->check, *kDictContainsRe, &f->expected, &f->variable);
    }
  } else if (rule == "transform_state") {
    f->variable = "functorch";
  } else if (rule == "value" && EndsWithTraining(f->variable)) {
    f->category = Category::MODULE_MODE;
  }
}

// Splits a check list on "; " outside brackets and quotes (current main joins the failing checks
// of one cache entry that way). Quotes are ignored when they do not pair up, as in the old
// "to be a tensor type, ' but found" text.
std::vector<std::string> SplitChecks(absl::string_view body) {
  auto split = [&](bool honour_quotes, bool* quotes_balanced) {
    std::vector<std::string> parts;
    int depth = 0;
    char quote = 0;
    size_t start = 0;
    for (size_t i = 0; i < body.size(); ++i) {
      const char c = body[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
        continue;
      }
      if (honour_quotes && (c == '\'' || c == '"')) {
        quote = c;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        --depth;
      } else if (c == ';' && depth == 0 && i + 1 < body.size() && body[i + 1] == ' ') {
        parts.emplace_back(absl::StripAsciiWhitespace(body.substr(start, i - start)));
        start = i + 2;
      }
    }
    parts.emplace_back(absl::StripAsciiWhitespace(body.substr(start)));
    *quotes_balanced = quote == 0;
    return parts;
  };
  bool balanced = true;
  std::vector<std::string> parts = split(/*honour_quotes=*/true, &balanced);
  if (!balanced) parts = split(/*honour_quotes=*/false, &balanced);
  return parts;
}

// §1.5 Step C on one bullet line: "- 0/1: <checks>  # <source>".
void ParseBullet(absl::string_view line, std::vector<GuardFailure>* out) {
  static const LazyRE2 kBulletRe = {
      R"re(\s*(?:-\s+)?(?:([^:\s]*\d/[^:\s]*):\s*)?(.*?)(?:\s{2,}#\s(.*?))?\s*)re"};
  // Guard-tree dumps prefix a check with its guard kind ("ID_MATCH: ", "| +- TENSOR_MATCH: ").
  static const LazyRE2 kGuardKindRe = {
      R"re(^(?:\|\s*)*(?:\+-\s*)?(?:__SHAPE_GUARD__|[A-Z][A-Z0-9]*_[A-Z0-9_]+): )re"};
  std::string entry_id, body, source;
  if (!RE2::FullMatch(Piece(line), *kBulletRe, &entry_id, &body, &source)) body = std::string(line);
  RE2::Replace(&body, *kGuardKindRe, "");
  for (const std::string& check : SplitChecks(StripLocalScope(body))) {
    GuardFailure failure = ClassifyGuardCheck(check);
    failure.entry_id = entry_id;
    failure.source = source;
    out->push_back(std::move(failure));
  }
}

// Lines of a "Recompiling function" record, a fail_on_recompile error or a limit warning that
// carry no check themselves.
bool IsRecordHeader(absl::string_view line) {
  static const LazyRE2 kHeaderRe = {
      R"re(^(?:.*Recompiling function |triggered by the following guard failure|guard \d+ failures:|.*Detected recompile when |To log all recompilation reasons|To diagnose recompilation issues|function: '|.*torch\._dynamo hit config\.))re"};
  return RE2::PartialMatch(Piece(line), *kHeaderRe);
}

}  // namespace

std::vector<std::string> DispatchKeysDiffering(absl::string_view expected,
                                               absl::string_view actual) {
  const std::vector<std::string> a = DispatchKeys(expected);
  const std::vector<std::string> b = DispatchKeys(actual);
  std::vector<std::string> diff;
  std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(diff));
  return diff;
}

std::string GuardFailure::Axis() const {
  if (rule == "rank") return variable + ".ndim";
  if (rule == "length") return "len(" + variable + ")";
  if (!dim.empty()) return variable + "[" + dim + "]";
  return variable;
}

std::vector<std::string> GuardFailure::ChangedAxes() const {
  if (rule == "global_state") return absl::StrSplit(variable, ", ", absl::SkipEmpty());
  return {Axis()};
}

namespace {

// The code part of a source comment, and whether it is only a frame of torch's.
absl::string_view CommentCode(absl::string_view source) {
  return absl::StripAsciiWhitespace(source.substr(0, source.find("  # ")));
}
bool IsTorchFrameOnly(absl::string_view code, std::string* frame) {
  static const LazyRE2 kFrameRe = {R"re(\(?([\w./-]+\.py:\d+ in [\w<>]+)\)?)re"};
  return RE2::FullMatch(Piece(code), *kFrameRe, frame);
}

// Torch names its own files in a guard's comment relative to its package ("nn/modules/conv.py",
// "_meta_registrations.py:3878 in bmm": IsTorchPackagePath), a user's from the root, less the
// prefix it shares with torch's directory ("nt/project/model.py" for /mnt/project).
//
// The frame a comment names after its code ("nn/modules/conv.py:549 in _conv_forward") when that
// code is torch's own (a module's `return F.conv2d(`), and the frame in parentheses after it
// where that is torch's too ("_subclasses/fake_impls.py:743 in conv", the line that added the
// guard); empty when the code is the user's.
std::string TorchCodeFrame(absl::string_view source) {
  static const LazyRE2 kFramesRe = {
      R"re(  # ([\w./-]+\.py)(:\d+ in [\w<>]+)(?: \(([\w./-]+\.py:\d+ in [\w<>]+)\))?)re"};
  std::string file, rest, origin;
  if (!RE2::PartialMatch(Piece(source), *kFramesRe, &file, &rest, &origin) ||
      !IsTorchPackagePath(file))
    return "";
  if (!origin.empty() && IsTorchPackagePath(origin)) return origin;
  return file + rest;
}

}  // namespace

std::string GuardFailure::UserCode() const {
  const absl::string_view code = CommentCode(source);
  std::string frame;
  if (IsTorchFrameOnly(code, &frame) || !TorchCodeFrame(source).empty()) return "";
  return std::string(code);
}

std::string GuardFailure::TorchFrame() const {
  std::string frame;
  if (IsTorchFrameOnly(CommentCode(source), &frame)) return frame;
  return TorchCodeFrame(source);
}

std::string StripLocalScope(absl::string_view text) {
  static const LazyRE2 kLocalRe = {R"re(L\[\s*['"](.*?)['"]\s*\])re"};
  std::string out(text);
  RE2::GlobalReplace(&out, *kLocalRe, R"re(\1)re");
  return out;
}

std::string ReadableSource(absl::string_view source) {
  // `._modules['layers']._modules['0']` → `.layers[0]`; `._parameters['w']` / `._buffers['b']`
  // → `.w` / `.b`: the attribute the user wrote.
  static const LazyRE2 kIndexRe = {R"re(\._(?:modules|parameters|buffers)\[['"](\d+)['"]\])re"};
  static const LazyRE2 kNameRe = {
      R"re(\._(?:modules|parameters|buffers)\[['"]([A-Za-z_][A-Za-z0-9_]*)['"]\])re"};
  std::string out(source);
  RE2::GlobalReplace(&out, *kIndexRe, R"re([\1])re");
  RE2::GlobalReplace(&out, *kNameRe, R"re(.\1)re");
  return out;
}

absl::string_view StripLogPrefix(absl::string_view line) {
  // §1.5 Step B; the compile-id bracket must look like one, so that a reason that starts with a
  // Python list is left alone.
  static const LazyRE2 kPrefixRe = {
      R"re((?:\[rank\d+\]:)?(?:[VIWEDC]\d{4} [\d:.]+ +\d+ \S+:\d+\] )?(?:\[\d{4}-\d\d-\d\d [\d:,]+\] )?(?:\[[^\]\s]*\d/[^\]\s]*\] )?(?:\[__recompiles(?:_verbose)?\] |torch\._dynamo\.guards\.__recompiles(?:_verbose)?: \[DEBUG\] )?)re"};
  re2::StringPiece rest = Piece(line);
  RE2::Consume(&rest, *kPrefixRe);
  return absl::string_view(rest.data(), rest.size());
}

GuardFailure ClassifyGuardCheck(absl::string_view check) {
  GuardFailure f;
  f.check = std::string(absl::StripAsciiWhitespace(StripLocalScope(check)));
  // The set's match is the rule's own (whole rules anchored alike): its captures are there.
  const int i = Rules().First(f.check);
  if (std::optional<Match> m =
          i < 0 ? std::nullopt : Match::Run(Rules().Regex(i), f.check, kRuleSpecs[i].whole)) {
    const RuleSpec& spec = kRuleSpecs[i];
    f.rule = spec.rule;
    f.category = spec.category;
    f.variable = m->Get("var");
    f.dim = m->Get("axis");
    f.expected = m->Get("expected");
    f.actual = m->Get("actual");
    Refine(*m, &f);
    f.variable = ReadableSource(f.variable);
    return f;
  }
  f.rule = "other";
  f.category = Category::OTHER;
  return f;
}

std::vector<GuardFailure> ParseRecompileReason(absl::string_view text) {
  std::vector<GuardFailure> out;
  for (absl::string_view raw_line : absl::StrSplit(text, '\n')) {
    absl::string_view line =
        absl::StripAsciiWhitespace(StripLogPrefix(absl::StripLeadingAsciiWhitespace(raw_line)));
    if (line.empty()) continue;
    // torch may append the user's stack to a reason; nothing after it is a check.
    if (absl::StartsWith(line, "User stack trace:")) break;
    if (size_t pos = line.find("last reason: "); pos != absl::string_view::npos) {
      ParseBullet(line.substr(pos + 13), &out);
      continue;
    }
    // torchdynamo 2022: "... due to the following guard failures: [['<check>'], ...]".
    constexpr absl::string_view kOldList = "due to the following guard failures: ";
    if (size_t pos = line.find(kOldList); pos != absl::string_view::npos) {
      for (const std::string& check : PythonStringLiterals(line.substr(pos + kOldList.size()))) {
        ParseBullet(check, &out);
      }
      continue;
    }
    if (IsRecordHeader(line)) continue;
    ParseBullet(line, &out);
  }
  if (out.empty()) out.push_back(ClassifyGuardCheck(""));
  return out;
}

std::optional<CacheLimitMessage> ParseCacheLimitMessage(absl::string_view text) {
  static const LazyRE2 kWarningRe = {R"re(torch\._dynamo hit config\.(\w+) \((\d+)\))re"};
  static const LazyRE2 kOldestRe = {
      R"re(torchdynamo hit recompilation cache limit \((\d+)\) for function '([^']+)')re"};
  static const LazyRE2 kFailOnHitRe = {
      R"re((\w+) reached(?:, because fail_on_recompile_limit_hit| with (?:fullgraph|one_graph)=True))re"};
  static const LazyRE2 kGraphBreakRe = {
      R"re(Dynamo recompile limit exceeded(?:.|\n)*?(?:exceeding the (\w+) cache size limit \(currently set to (\d+)\)|Limit type: (\w+)))re"};
  static const LazyRE2 kFunctionRe = {R"re(function: '([^']+)' \((.+):(\d+)\))re"};
  static const LazyRE2 kLastReasonRe = {R"re(last reason: ([^\n]*))re"};

  // Each form holds one of these literals: a text with none (most are) skips the regexes, each of
  // which would scan it whole.
  static constexpr absl::string_view kLiterals[] = {"hit config.", "hit recompilation cache limit",
                                                    "Dynamo recompile limit exceeded", " reached"};
  // glibc's memmem skips ahead by the needle's length; absl::StrContains stops at every first
  // character (every space, for " reached").
  const auto contains = [&](absl::string_view literal) {
    return memmem(text.data(), text.size(), literal.data(), literal.size()) != nullptr;
  };
  if (std::none_of(std::begin(kLiterals), std::end(kLiterals), contains)) {
    return std::nullopt;
  }
  const re2::StringPiece in = Piece(text);
  CacheLimitMessage msg;
  std::string value, limit_alt;
  if (RE2::PartialMatch(in, *kWarningRe, &msg.limit, &value)) {
    std::string line;
    if (RE2::PartialMatch(in, *kFunctionRe, &msg.function, &msg.file, &line) &&
        !absl::SimpleAtoi(line, &msg.line)) {
      msg.line = 0;
    }
    RE2::PartialMatch(in, *kLastReasonRe, &msg.last_reason);
    msg.last_reason = std::string(absl::StripAsciiWhitespace(msg.last_reason));
  } else if (RE2::PartialMatch(in, *kOldestRe, &value, &msg.function)) {
    msg.limit = "cache_size_limit";
  } else if (RE2::PartialMatch(in, *kGraphBreakRe, &msg.limit, &value, &limit_alt)) {
    if (msg.limit.empty()) msg.limit = limit_alt;
    if (msg.limit.empty()) msg.limit = "recompile_limit";
  } else if (absl::StrContains(text, "Dynamo recompile limit exceeded")) {
    msg.limit = "recompile_limit";
  } else if (!RE2::PartialMatch(in, *kFailOnHitRe, &msg.limit) ||
             !absl::StrContains(msg.limit, "limit")) {
    return std::nullopt;
  }
  if (uint64_t v = 0; !value.empty() && absl::SimpleAtoi(value, &v)) msg.value = v;
  return msg;
}

}  // namespace cl
