#include "lint/python_parser.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/number_format.h"
#include "common/utf8.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace cl::lint {
namespace {

// The grammar's symbol and field ids mapped to our enums, once per process.
struct GrammarMap {
  std::vector<Kind> kinds;
  std::vector<Field> fields;
};

const GrammarMap& Grammar() {
  static const GrammarMap* const kMap = [] {
    static const std::pair<const char*, Kind> kNamed[] = {
        {"module", Kind::kModule},
        {"comment", Kind::kComment},
        {"function_definition", Kind::kFunctionDefinition},
        {"class_definition", Kind::kClassDefinition},
        {"decorated_definition", Kind::kDecoratedDefinition},
        {"decorator", Kind::kDecorator},
        {"lambda", Kind::kLambda},
        {"lambda_parameters", Kind::kLambdaParameters},
        {"parameters", Kind::kParameters},
        {"typed_parameter", Kind::kTypedParameter},
        {"default_parameter", Kind::kDefaultParameter},
        {"typed_default_parameter", Kind::kTypedDefaultParameter},
        {"list_splat_pattern", Kind::kListSplatPattern},
        {"dictionary_splat_pattern", Kind::kDictionarySplatPattern},
        {"block", Kind::kBlock},
        {"expression_statement", Kind::kExpressionStatement},
        {"assignment", Kind::kAssignment},
        {"augmented_assignment", Kind::kAugmentedAssignment},
        {"named_expression", Kind::kNamedExpression},
        {"call", Kind::kCall},
        {"attribute", Kind::kAttribute},
        {"identifier", Kind::kIdentifier},
        {"subscript", Kind::kSubscript},
        {"slice", Kind::kSlice},
        {"argument_list", Kind::kArgumentList},
        {"keyword_argument", Kind::kKeywordArgument},
        {"list_splat", Kind::kListSplat},
        {"dictionary_splat", Kind::kDictionarySplat},
        {"parenthesized_expression", Kind::kParenthesizedExpression},
        {"pattern_list", Kind::kPatternList},
        {"tuple_pattern", Kind::kTuplePattern},
        {"list_pattern", Kind::kListPattern},
        {"tuple", Kind::kTuple},
        {"list", Kind::kList},
        {"set", Kind::kSet},
        {"dictionary", Kind::kDictionary},
        {"expression_list", Kind::kExpressionList},
        {"integer", Kind::kInteger},
        {"float", Kind::kFloat},
        {"string", Kind::kString},
        {"concatenated_string", Kind::kConcatenatedString},
        {"interpolation", Kind::kInterpolation},
        {"true", Kind::kTrue},
        {"false", Kind::kFalse},
        {"none", Kind::kNoneLiteral},
        {"ellipsis", Kind::kEllipsis},
        {"binary_operator", Kind::kBinaryOperator},
        {"unary_operator", Kind::kUnaryOperator},
        {"comparison_operator", Kind::kComparisonOperator},
        {"boolean_operator", Kind::kBooleanOperator},
        {"not_operator", Kind::kNotOperator},
        {"conditional_expression", Kind::kConditionalExpression},
        {"if_statement", Kind::kIfStatement},
        {"elif_clause", Kind::kElifClause},
        {"else_clause", Kind::kElseClause},
        {"while_statement", Kind::kWhileStatement},
        {"for_statement", Kind::kForStatement},
        {"for_in_clause", Kind::kForInClause},
        {"if_clause", Kind::kIfClause},
        {"with_statement", Kind::kWithStatement},
        {"with_clause", Kind::kWithClause},
        {"with_item", Kind::kWithItem},
        {"as_pattern", Kind::kAsPattern},
        {"as_pattern_target", Kind::kAsPatternTarget},
        {"return_statement", Kind::kReturnStatement},
        {"global_statement", Kind::kGlobalStatement},
        {"nonlocal_statement", Kind::kNonlocalStatement},
        {"assert_statement", Kind::kAssertStatement},
        {"match_statement", Kind::kMatchStatement},
        {"case_clause", Kind::kCaseClause},
        {"list_comprehension", Kind::kListComprehension},
        {"set_comprehension", Kind::kSetComprehension},
        {"dictionary_comprehension", Kind::kDictionaryComprehension},
        {"generator_expression", Kind::kGeneratorExpression},
        {"import_statement", Kind::kImportStatement},
        {"import_from_statement", Kind::kImportFromStatement},
        {"aliased_import", Kind::kAliasedImport},
        {"dotted_name", Kind::kDottedName},
        {"relative_import", Kind::kRelativeImport},
        {"try_statement", Kind::kTryStatement},
        {"type", Kind::kType},
        {"delete_statement", Kind::kDeleteStatement},
    };
    static const std::pair<const char*, Field> kFields[] = {
        {"alias", Field::kAlias},
        {"alternative", Field::kAlternative},
        {"argument", Field::kArgument},
        {"arguments", Field::kArguments},
        {"attribute", Field::kAttribute},
        {"body", Field::kBody},
        {"condition", Field::kCondition},
        {"consequence", Field::kConsequence},
        {"definition", Field::kDefinition},
        {"function", Field::kFunction},
        {"key", Field::kKey},
        {"left", Field::kLeft},
        {"module_name", Field::kModuleName},
        {"name", Field::kName},
        {"object", Field::kObject},
        {"operator", Field::kOperator},
        {"operators", Field::kOperators},
        {"parameters", Field::kParameters},
        {"return_type", Field::kReturnType},
        {"right", Field::kRight},
        {"subject", Field::kSubject},
        {"subscript", Field::kSubscript},
        {"superclasses", Field::kSuperclasses},
        {"type", Field::kType},
        {"value", Field::kValue},
    };
    const TSLanguage* lang = tree_sitter_python();
    auto* map = new GrammarMap;
    absl::flat_hash_map<absl::string_view, Kind> named(std::begin(kNamed), std::end(kNamed));
    const uint32_t symbols = ts_language_symbol_count(lang);
    map->kinds.resize(symbols, Kind::kOther);
    for (uint32_t s = 0; s < symbols; ++s) {
      const TSSymbol sym = static_cast<TSSymbol>(s);
      const TSSymbolType type = ts_language_symbol_type(lang, sym);
      if (type != TSSymbolTypeRegular) {
        map->kinds[s] = type == TSSymbolTypeAnonymous ? Kind::kToken : Kind::kOther;
        continue;
      }
      if (auto it = named.find(ts_language_symbol_name(lang, sym)); it != named.end()) {
        map->kinds[s] = it->second;
      }
    }
    absl::flat_hash_map<absl::string_view, Field> fields(std::begin(kFields), std::end(kFields));
    const uint32_t field_count = ts_language_field_count(lang);
    map->fields.resize(field_count + 1, Field::kOther);
    map->fields[0] = Field::kNone;
    for (uint32_t f = 1; f <= field_count; ++f) {
      const char* name = ts_language_field_name_for_id(lang, static_cast<TSFieldId>(f));
      if (name == nullptr) continue;
      if (auto it = fields.find(name); it != fields.end()) map->fields[f] = it->second;
    }
    return map;
  }();
  return *kMap;
}

struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};

uint32_t CountLines(absl::string_view text) {
  if (text.empty()) return 0;
  uint32_t lines = static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? lines : lines + 1;
}

std::string LineList(const std::vector<uint32_t>& lines, size_t total) {
  std::string out = absl::StrJoin(lines, ", ");
  if (total > lines.size()) absl::StrAppend(&out, ", … (", total, " in all)");
  return out;
}

// Copies tree-sitter's tree into `tree` with one cursor walk, cutting at kMaxDepth.
void Convert(TSNode root, SyntaxTree& tree, ParsedSource& out) {
  const GrammarMap& grammar = Grammar();
  constexpr size_t kListedErrors = 5;
  std::vector<uint32_t> error_lines;
  size_t errors = 0;
  uint32_t truncated_line = 0;
  size_t truncated = 0;

  struct Frame {
    NodeId id;
    NodeId last_child;
  };
  std::vector<Frame> stack;
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  bool visiting = true;
  while (true) {
    if (visiting) {
      const TSNode n = ts_tree_cursor_current_node(&cursor);
      Node node;
      const TSSymbol sym = ts_node_symbol(n);
      node.kind = sym == static_cast<TSSymbol>(-1) ? Kind::kError
                  : sym < grammar.kinds.size()     ? grammar.kinds[sym]
                                                   : Kind::kOther;
      const TSFieldId field = ts_tree_cursor_current_field_id(&cursor);
      node.field = field < grammar.fields.size() ? grammar.fields[field] : Field::kOther;
      // Punctuation and keywords in no field ("(", ",", "def", ":") say nothing the detectors read;
      // leaving them out of the arena saves a third of it. Operators have fields and stay.
      if (node.kind == Kind::kToken && node.field == Field::kNone && !ts_node_is_missing(n)) {
        if (ts_tree_cursor_goto_next_sibling(&cursor)) continue;
        if (stack.empty() || !ts_tree_cursor_goto_parent(&cursor)) break;
        stack.pop_back();
        visiting = false;
        continue;
      }
      node.start = ts_node_start_byte(n);
      node.end = ts_node_end_byte(n);
      node.line = ts_node_start_point(n).row + 1;
      node.depth = static_cast<uint16_t>(stack.size());
      const bool missing = ts_node_is_missing(n);
      if (node.kind == Kind::kError || missing) {
        if (error_lines.size() < kListedErrors &&
            (error_lines.empty() || error_lines.back() != node.line)) {
          error_lines.push_back(node.line);
        }
        ++errors;
      }
      if (!stack.empty()) node.parent = stack.back().id;
      const NodeId id = tree.Add(node);
      if (!stack.empty()) {
        Frame& f = stack.back();
        if (f.last_child == kNoNode) {
          tree.mutable_node(f.id).first_child = id;
        } else {
          tree.mutable_node(f.last_child).next_sibling = id;
        }
        f.last_child = id;
      }
      if (stack.size() >= SyntaxTree::kMaxDepth) {
        if (ts_node_child_count(n) > 0) {
          tree.mutable_node(id).kind = Kind::kTruncated;
          if (truncated++ == 0) truncated_line = node.line;
        }
      } else if (ts_tree_cursor_goto_first_child(&cursor)) {
        stack.push_back({id, kNoNode});
        continue;
      }
    }
    if (ts_tree_cursor_goto_next_sibling(&cursor)) {
      visiting = true;
      continue;
    }
    if (stack.empty() || !ts_tree_cursor_goto_parent(&cursor)) break;
    stack.pop_back();
    visiting = false;
  }
  ts_tree_cursor_delete(&cursor);

  if (errors > 0) {
    out.has_errors = true;
    out.diagnostics.push_back(
        {error_lines.empty() ? 0 : error_lines.front(),
         absl::StrCat(errors == 1 ? "a syntax error" : absl::StrCat(errors, " syntax errors"),
                      " at ", Noun(error_lines.size(), "line ", "lines "),
                      LineList(error_lines, errors),
                      ": tree-sitter recovered; the parts that parsed were scanned")});
  }
  if (truncated > 0) {
    out.diagnostics.push_back(
        {truncated_line, absl::StrCat("expressions nested deeper than ", SyntaxTree::kMaxDepth,
                                      " levels (first at line ", truncated_line,
                                      "): their inner parts were not scanned")});
  }
}

}  // namespace

void PythonParser::Deleter::operator()(TSParser* p) const { ts_parser_delete(p); }

PythonParser::PythonParser() : parser_(ts_parser_new()) {
  // The grammar is compiled into this binary; a language/ABI mismatch is a build bug.
  if (!ts_parser_set_language(parser_.get(), tree_sitter_python())) parser_.reset();
}

PythonParser::~PythonParser() = default;

ParsedSource PythonParser::Parse(absl::string_view text, const ParseLimits& limits) {
  ParsedSource out;
  out.lines = CountLines(text);
  if (parser_ == nullptr) {
    out.diagnostics.push_back(
        {0, "the Python grammar does not load into this tree-sitter (ABI mismatch)"});
    return out;
  }
  if (text.size() > limits.max_bytes) {
    out.diagnostics.push_back(
        {0, absl::StrCat("not scanned: ", text.size(), " bytes is over the ", limits.max_bytes,
                         "-byte limit for one source file")});
    return out;
  }
  if (out.lines > limits.max_lines) {
    out.diagnostics.push_back(
        {0, absl::StrCat("not scanned: ", out.lines, " lines is over the ", limits.max_lines,
                         "-line limit for one source file")});
    return out;
  }
  std::string& source = out.tree.mutable_source();
  if (IsValidUtf8(text)) {
    source.assign(text.data(), text.size());
  } else {
    source = ToValidUtf8(text);
    out.diagnostics.push_back({0, "invalid UTF-8 (bad bytes read as U+FFFD)"});
  }
  // A byte-order mark is not Python; drop it (lines are unchanged).
  if (source.compare(0, 3, "\xEF\xBB\xBF") == 0) source.erase(0, 3);

  const uint64_t budget =
      limits.timeout_micros != 0
          ? limits.timeout_micros
          : 2'000'000 + static_cast<uint64_t>(source.size()) * 1'000'000 / (1 << 20);
  ts_parser_set_timeout_micros(parser_.get(), budget);
  std::unique_ptr<TSTree, TreeDeleter> ts_tree(ts_parser_parse_string(
      parser_.get(), nullptr, source.data(), static_cast<uint32_t>(source.size())));
  if (ts_tree == nullptr) {
    ts_parser_reset(parser_.get());  // a halted parse must be reset before the next one
    out.diagnostics.push_back({0, absl::StrCat("not scanned: parsing took longer than its ",
                                               budget / 1000, " ms budget")});
    source.clear();
    return out;
  }
  // Named nodes run at about one per 6 bytes of Python; reserving avoids regrowth.
  out.tree.Reserve(source.size() / 3);
  Convert(ts_tree_root_node(ts_tree.get()), out.tree, out);
  return out;
}

}  // namespace cl::lint
