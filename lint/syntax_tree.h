// A Python syntax tree in a flat arena, converted once from tree-sitter's tree.
//
// The detectors ask the same questions many times (a node's kind, its `function:` child, its
// text, its line). On tree-sitter's own nodes each of those walks the tree again; here each is an
// array lookup, and the tree-sitter tree is freed as soon as the arena is built. Kinds and fields
// are small enums mapped from the grammar's symbol and field tables once per process.
//
// Depth is bounded: a subtree nested deeper than kMaxDepth is not copied (its root is kept as a
// kTruncated leaf), so every recursive helper over this tree has a bounded stack.
#ifndef LINT_SYNTAX_TREE_H_
#define LINT_SYNTAX_TREE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cl::lint {

// The tree-sitter-python node types the detectors look at; the rest are kOther (named) or
// kToken (anonymous: operators, keywords, punctuation).
enum class Kind : uint8_t {
  kNone,  // the null node
  kOther,
  kToken,
  kError,
  kTruncated,
  kModule,
  kComment,
  kFunctionDefinition,
  kClassDefinition,
  kDecoratedDefinition,
  kDecorator,
  kLambda,
  kLambdaParameters,
  kParameters,
  kTypedParameter,
  kDefaultParameter,
  kTypedDefaultParameter,
  kListSplatPattern,
  kDictionarySplatPattern,
  kBlock,
  kExpressionStatement,
  kAssignment,
  kAugmentedAssignment,
  kNamedExpression,
  kCall,
  kAttribute,
  kIdentifier,
  kSubscript,
  kSlice,
  kArgumentList,
  kKeywordArgument,
  kListSplat,
  kDictionarySplat,
  kParenthesizedExpression,
  kPatternList,
  kTuplePattern,
  kListPattern,
  kTuple,
  kList,
  kSet,
  kDictionary,
  kExpressionList,
  kInteger,
  kFloat,
  kString,
  kConcatenatedString,
  kInterpolation,
  kTrue,
  kFalse,
  kNoneLiteral,
  kEllipsis,
  kBinaryOperator,
  kUnaryOperator,
  kComparisonOperator,
  kBooleanOperator,
  kNotOperator,
  kConditionalExpression,
  kIfStatement,
  kElifClause,
  kElseClause,
  kWhileStatement,
  kForStatement,
  kForInClause,
  kIfClause,
  kWithStatement,
  kWithClause,
  kWithItem,
  kAsPattern,
  kAsPatternTarget,
  kReturnStatement,
  kGlobalStatement,
  kNonlocalStatement,
  kAssertStatement,
  kMatchStatement,
  kCaseClause,
  kListComprehension,
  kSetComprehension,
  kDictionaryComprehension,
  kGeneratorExpression,
  kImportStatement,
  kImportFromStatement,
  kAliasedImport,
  kDottedName,
  kRelativeImport,
  kTryStatement,
  kType,
  kDeleteStatement,
  kCount,
};

enum class Field : uint8_t {
  kNone,
  kOther,
  kAlias,
  kAlternative,
  kArgument,
  kArguments,
  kAttribute,
  kBody,
  kCondition,
  kConsequence,
  kDefinition,
  kFunction,
  kKey,
  kLeft,
  kModuleName,
  kName,
  kObject,
  kOperator,
  kOperators,
  kParameters,
  kReturnType,
  kRight,
  kSubject,
  kSubscript,
  kSuperclasses,
  kType,
  kValue,
  kCount,
};

using NodeId = uint32_t;
inline constexpr NodeId kNoNode = 0;

struct Node {
  Kind kind = Kind::kNone;
  Field field = Field::kNone;  // the field this node fills in its parent
  uint16_t depth = 0;
  NodeId parent = kNoNode;
  NodeId first_child = kNoNode;
  NodeId next_sibling = kNoNode;
  uint32_t start = 0;  // byte offsets into the source
  uint32_t end = 0;
  uint32_t line = 0;  // 1-based line of `start`
};

class SyntaxTree {
 public:
  static constexpr int kMaxDepth = 200;

  SyntaxTree() : nodes_(1) {}  // node 0 is the null node

  // The source the offsets refer to (valid UTF-8; owned).
  const std::string& source() const { return source_; }
  std::string& mutable_source() { return source_; }

  NodeId root() const { return nodes_.size() > 1 ? 1 : kNoNode; }
  size_t size() const { return nodes_.size() - 1; }
  const Node& operator[](NodeId id) const { return nodes_[id]; }
  Kind kind(NodeId id) const { return nodes_[id].kind; }
  uint32_t line(NodeId id) const { return nodes_[id].line; }
  NodeId parent(NodeId id) const { return nodes_[id].parent; }
  NodeId first_child(NodeId id) const { return nodes_[id].first_child; }
  NodeId next_sibling(NodeId id) const { return nodes_[id].next_sibling; }

  absl::string_view Text(NodeId id) const {
    const Node& n = nodes_[id];
    return absl::string_view(source_).substr(n.start, n.end - n.start);
  }
  // The first child filling `field`, or kNoNode.
  NodeId Child(NodeId id, Field field) const;
  // The first child that is not a token or a comment (the i-th with `index`).
  NodeId NamedChild(NodeId id, int index = 0) const;
  // Skips parentheses: `((x))` → `x`.
  NodeId Unparen(NodeId id) const;
  // One line of source for a report: the node's text up to its first line break, cut at `max`
  // bytes (on a character boundary, common/utf8.h) with "…" when longer.
  std::string Snippet(NodeId id, size_t max = 120) const;

  // Building (python_parser.cc).
  NodeId Add(const Node& node);
  Node& mutable_node(NodeId id) { return nodes_[id]; }
  void Reserve(size_t n) { nodes_.reserve(n + 1); }

 private:
  std::vector<Node> nodes_;
  std::string source_;
};

// A node's named children (tokens and comments skipped), for range-for.
class NamedChildren {
 public:
  class Iterator {
   public:
    Iterator(const SyntaxTree* tree, NodeId id) : tree_(tree), id_(Skip(tree, id)) {}
    NodeId operator*() const { return id_; }
    Iterator& operator++() {
      id_ = Skip(tree_, tree_->next_sibling(id_));
      return *this;
    }
    bool operator!=(const Iterator& other) const { return id_ != other.id_; }

   private:
    static NodeId Skip(const SyntaxTree* tree, NodeId id) {
      while (id != kNoNode &&
             (tree->kind(id) == Kind::kToken || tree->kind(id) == Kind::kComment)) {
        id = tree->next_sibling(id);
      }
      return id;
    }
    const SyntaxTree* tree_;
    NodeId id_;
  };
  NamedChildren(const SyntaxTree& tree, NodeId id) : tree_(&tree), id_(id) {}
  Iterator begin() const { return Iterator(tree_, tree_->first_child(id_)); }
  Iterator end() const { return Iterator(tree_, kNoNode); }
  std::vector<NodeId> ToVector() const {
    std::vector<NodeId> out;
    for (NodeId n : *this) out.push_back(n);
    return out;
  }

 private:
  const SyntaxTree* tree_;
  NodeId id_;
};

}  // namespace cl::lint

#endif  // LINT_SYNTAX_TREE_H_
