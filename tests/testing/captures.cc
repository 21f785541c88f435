#include "tests/testing/captures.h"

#include "absl/strings/str_cat.h"
#include "capture/capture_io.h"
#include "capture/stream/capture_splitter.h"
#include "capture/stream/part_packer.h"
#include "gtest/gtest.h"

namespace cl::testing {

compile_lens::v1::SessionCapture LoadHero(const std::string& name) {
  absl::StatusOr<compile_lens::v1::SessionCapture> c =
      ReadCaptureFile(absl::StrCat(CL_SOURCE_DIR, "/examples/hero/", name));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : compile_lens::v1::SessionCapture();
}

std::vector<std::string> HeroStreamMessages() {
  namespace v1 = ::compile_lens::v1;
  std::vector<std::string> out;
  PartPacker packer(kDefaultPartBudget);
  const auto push = [&](v1::AnalyzeChunk&& chunk) {
    out.push_back(chunk.SerializeAsString());
    return absl::OkStatus();
  };
  for (const auto& [file, side] :
       {std::pair{"head.cls.json", v1::HEAD}, std::pair{"base.cls.json", v1::BASE}}) {
    const v1::SessionCapture c = LoadHero(file);
    if (c.schema().empty()) return {};
    const absl::Status s = SplitCapture(c, side, kDefaultPartBudget, [&](v1::CapturePart&& p) {
      return packer.Add(std::move(p), push);
    });
    EXPECT_TRUE(s.ok()) << s;
  }
  EXPECT_TRUE(packer.Flush(push).ok());
  v1::AnalyzeChunk end;
  end.mutable_end()->set_parts(packer.parts());
  out.push_back(end.SerializeAsString());
  return out;
}

compile_lens::v1::Graph* AddChainGraph(compile_lens::v1::SessionCapture& capture,
                                       const std::string& id, int nodes) {
  compile_lens::v1::Graph* g = capture.add_graphs();
  g->set_id(id);
  g->set_stage(compile_lens::v1::Graph::POST_GRAD);
  for (int i = 0; i < nodes; ++i) {
    compile_lens::v1::Node* n = g->add_nodes();
    n->set_name(absl::StrCat("n", i));
    n->set_op(i == 0 ? "placeholder" : "call_function");
    n->set_target("aten.add.Tensor");
    if (i > 0) n->add_args()->set_node(absl::StrCat("n", i - 1));
    n->mutable_meta()->set_dtype("f32");
    n->mutable_meta()->add_shape("s0");
    n->mutable_meta()->add_shape("256");
  }
  return g;
}

}  // namespace cl::testing
