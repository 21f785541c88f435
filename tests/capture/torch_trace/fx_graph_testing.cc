#include "tests/capture/torch_trace/fx_graph_testing.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/validate.h"
#include "common/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace cl::fx_testing {

using ::cl::testing::IsOk;

std::string DumpArg(const v1::Arg& a) {
  switch (a.kind_case()) {
    case v1::Arg::kNode:
      return absl::StrCat("%", a.node());
    case v1::Arg::kLiteral:
      return a.literal();
    case v1::Arg::kList: {
      std::vector<std::string> items;
      for (const v1::Arg& i : a.list().items()) items.push_back(DumpArg(i));
      if (!a.list().tuple()) return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
      return absl::StrCat("(", absl::StrJoin(items, ", "), items.size() == 1 ? ",)" : ")");
    }
    case v1::Arg::KIND_NOT_SET:
      break;
  }
  return "<unset>";
}

std::string DumpNode(const v1::Node& n) {
  std::vector<std::string> args;
  for (const v1::Arg& a : n.args()) args.push_back(DumpArg(a));
  std::vector<std::string> keys;
  for (const auto& [k, v] : n.kwargs()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  for (const std::string& k : keys) args.push_back(absl::StrCat(k, "=", DumpArg(n.kwargs().at(k))));
  std::string out =
      absl::StrCat(n.name(), " = ", n.op(), "[", n.target(), "](", absl::StrJoin(args, ", "), ")");
  if (n.has_meta()) {
    const v1::TensorMeta& m = n.meta();
    absl::StrAppend(&out, "  meta{dtype=", m.dtype(), " shape=[", absl::StrJoin(m.shape(), ", "),
                    "] stride=[", absl::StrJoin(m.stride(), ", "), "] device=", m.device(),
                    m.sym_expr().empty() ? "" : absl::StrCat(" sym=", m.sym_expr()), "}");
  }
  if (n.has_source()) {
    const v1::SourceLoc& s = n.source();
    if (s.no_stacktrace()) {
      absl::StrAppend(&out, "  src{no_stacktrace}");
    } else {
      absl::StrAppend(&out, "  src{", s.file(), ":", s.line(), " in ", s.fn(), " | ", s.code(),
                      "}");
    }
  }
  if (!n.module_stack().empty())
    absl::StrAppend(&out, "  module{", absl::StrJoin(n.module_stack(), " / "), "}");
  return out;
}

std::string Dump(const v1::Graph& g, const FxParseResult& r) {
  std::string out = absl::StrCat("# nodes=", r.nodes, " skipped_lines=", r.skipped_lines,
                                 " nested_classes=", r.nested_classes, "\n");
  for (const std::string& p : r.problems) absl::StrAppend(&out, "# problem: ", p, "\n");
  for (const v1::Node& n : g.nodes()) absl::StrAppend(&out, DumpNode(n), "\n");
  return out;
}

const v1::Node& Parsed::node(absl::string_view name) const {
  for (const v1::Node& n : graph.nodes()) {
    if (n.name() == name) return n;
  }
  ADD_FAILURE() << "no node " << name << " in\n" << Dump(graph, result);
  static const v1::Node kNone;
  return kNone;
}

Parsed Parse(absl::string_view text, FxDetail detail) {
  Parsed p;
  p.result = ParseFxGraphText(text, &p.graph, detail);
  return p;
}

std::vector<std::string> Names(const v1::Graph& g) {
  std::vector<std::string> names;
  for (const v1::Node& n : g.nodes()) names.push_back(n.name());
  return names;
}

void ExpectConsistent(const v1::Graph& graph) {
  v1::SessionCapture c;
  c.set_schema("0.5.0");
  v1::Graph* g = c.add_graphs();
  *g = graph;
  g->set_id("g");
  EXPECT_THAT(ValidateCapture(c), IsOk());
  const auto valid = [](const std::string& s) {
    EXPECT_TRUE(IsValidUtf8(s)) << absl::CHexEscape(s);
  };
  std::vector<const v1::Arg*> args;
  for (const v1::Node& n : graph.nodes()) {
    for (const std::string* s :
         {&n.name(), &n.op(), &n.target(), &n.meta().dtype(), &n.meta().device(),
          &n.source().file(), &n.source().fn(), &n.source().code()}) {
      valid(*s);
    }
    for (const std::string& d : n.meta().shape()) valid(d);
    for (const std::string& d : n.meta().stride()) valid(d);
    for (const v1::Arg& a : n.args()) args.push_back(&a);
    for (const auto& [k, a] : n.kwargs()) {
      valid(k);
      args.push_back(&a);
    }
  }
  while (!args.empty()) {
    const v1::Arg* a = args.back();
    args.pop_back();
    valid(a->node());
    valid(a->literal());
    for (const v1::Arg& i : a->list().items()) args.push_back(&i);
  }
}

}  // namespace cl::fx_testing
