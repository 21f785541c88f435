#include "lint/syntax_tree.h"

#include "common/utf8.h"

namespace cl::lint {

NodeId SyntaxTree::Child(NodeId id, Field field) const {
  for (NodeId c = nodes_[id].first_child; c != kNoNode; c = nodes_[c].next_sibling) {
    if (nodes_[c].field == field) return c;
  }
  return kNoNode;
}

NodeId SyntaxTree::NamedChild(NodeId id, int index) const {
  for (NodeId c : NamedChildren(*this, id)) {
    if (index-- == 0) return c;
  }
  return kNoNode;
}

NodeId SyntaxTree::Unparen(NodeId id) const {
  while (id != kNoNode && nodes_[id].kind == Kind::kParenthesizedExpression) id = NamedChild(id);
  return id;
}

std::string SyntaxTree::Snippet(NodeId id, size_t max) const {
  const absl::string_view text = Text(id);
  // The mark goes after the trailing space is trimmed, so the prefix is cut here rather than by
  // ClipUtf8.
  const absl::string_view shown = Utf8Prefix(text.substr(0, text.find_first_of("\r\n")), max);
  std::string out(shown);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  if (shown.size() < text.size()) out += kEllipsis;
  return out;
}

NodeId SyntaxTree::Add(const Node& node) {
  nodes_.push_back(node);
  return static_cast<NodeId>(nodes_.size() - 1);
}

}  // namespace cl::lint
