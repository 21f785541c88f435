// Captures for tests and benchmarks: the real hero captures, and synthetic graphs of any size.
#ifndef TESTS_TESTING_CAPTURES_H_
#define TESTS_TESTING_CAPTURES_H_

#include <string>
#include <vector>

#include "compile_lens/v1/capture.pb.h"

namespace cl::testing {

// examples/hero/<name> ("head.cls.json" or "base.cls.json"), loaded and validated; fails the
// calling test (and returns an empty capture) when it cannot be read.
compile_lens::v1::SessionCapture LoadHero(const std::string& name);

// The hero session's Analyze messages after the options, serialized as cl-client sends them: the
// head's and the base's parts packed into batches (capture/stream/part_packer.h), then the end
// marker. Empty (and the calling test failed) when the captures cannot be read.
std::vector<std::string> HeroStreamMessages();

// Adds to `capture` a graph `id` of `nodes` chained f32 nodes (n0 a placeholder, n<i> =
// add(n<i-1>)).
compile_lens::v1::Graph* AddChainGraph(compile_lens::v1::SessionCapture& capture,
                                       const std::string& id, int nodes);

}  // namespace cl::testing

#endif  // TESTS_TESTING_CAPTURES_H_
