// make_big_capture OUT.cls.pb NODES: the hero's head capture plus one post-grad graph of NODES
// chained nodes, for tests that need an upload that takes a while to stream.
#include <cstdlib>
#include <iostream>

#include "capture/capture_io.h"
#include "tests/testing/captures.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_big_capture OUT.cls.pb NODES\n";
    return 2;
  }
  compile_lens::v1::SessionCapture capture = cl::testing::LoadHero("head.cls.json");
  cl::testing::AddChainGraph(capture, "big", std::atoi(argv[2]));
  const absl::Status s = cl::WriteCaptureFile(argv[1], capture);
  if (!s.ok()) std::cerr << s << "\n";
  return s.ok() ? 0 : 1;
}
