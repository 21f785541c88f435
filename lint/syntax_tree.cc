#include "lint/syntax_tree.h"

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
  absl::string_view text = Text(id);
  bool cut = false;
  if (const size_t nl = text.find_first_of("\r\n"); nl != absl::string_view::npos) {
    text = text.substr(0, nl);
    cut = true;
  }
  if (text.size() > max) {
    size_t n = max;
    // Back off to the start of a character: never split a UTF-8 sequence.
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    text = text.substr(0, n);
    cut = true;
  }
  std::string out(text);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  if (cut) out += "…";
  return out;
}

NodeId SyntaxTree::Add(const Node& node) {
  nodes_.push_back(node);
  return static_cast<NodeId>(nodes_.size() - 1);
}

}  // namespace cl::lint
