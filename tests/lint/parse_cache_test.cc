// ParseCache: a file sent again is the same parsed file; another text, path or limit is another
// entry; the least recently used goes first; what did not parse is not kept; and a scan through
// the cache finds exactly what a scan without it finds, on many threads at once.
#include "lint/parse_cache.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/lint/lint_testing.h"

namespace cl::lint {
namespace {

using namespace ::cl::lint::testing;  // NOLINT: the lint tests' helpers

constexpr char kModel[] = R"py(import torch

class Scene(torch.nn.Module):
    def forward(self, x):
        y = x.view(-1)
        y.mul_(0.5)
        return x + torch.rand(3)

model = torch.compile(Scene())
)py";

TEST(ParseCacheTest, TheSameFileIsParsedOnce) {
  ParseCache cache(8, 1 << 20);
  PythonParser parser;
  auto a = cache.Get(parser, "/p/m.py", kModel, {});
  auto b = cache.Get(parser, "/p/m.py", std::string(kModel), {});  // equal text, another buffer
  EXPECT_EQ(a.get(), b.get());
  ASSERT_TRUE(a->index.has_value());
  EXPECT_EQ(a->index->path(), "/p/m.py");
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST(ParseCacheTest, AnotherTextPathOrLimitIsAnotherEntry) {
  ParseCache cache(8, 1 << 20);
  PythonParser parser;
  auto a = cache.Get(parser, "/p/m.py", kModel, {});
  EXPECT_NE(cache.Get(parser, "/p/m.py", absl::StrCat(kModel, "\n# edited\n"), {}).get(), a.get());
  auto other_path = cache.Get(parser, "/q/m.py", kModel, {});
  EXPECT_NE(other_path.get(), a.get());
  EXPECT_EQ(other_path->index->path(), "/q/m.py");
  ParseLimits limits;
  limits.max_bytes = 1 << 19;
  EXPECT_NE(cache.Get(parser, "/p/m.py", kModel, limits).get(), a.get());
  EXPECT_EQ(cache.stats().entries, 4u);
}

TEST(ParseCacheTest, LeastRecentlyUsedGoesFirstByCountAndByBytes) {
  PythonParser parser;
  ParseCache by_count(2, 1 << 20);
  auto a = by_count.Get(parser, "/a.py", kModel, {});
  by_count.Get(parser, "/b.py", kModel, {});
  by_count.Get(parser, "/a.py", kModel, {});  // a is now the most recent
  by_count.Get(parser, "/c.py", kModel, {});  // b goes
  EXPECT_EQ(by_count.Get(parser, "/a.py", kModel, {}).get(), a.get());
  const uint64_t misses = by_count.stats().misses;
  by_count.Get(parser, "/b.py", kModel, {});
  EXPECT_EQ(by_count.stats().misses, misses + 1);

  const size_t size = std::string(kModel).size();
  ParseCache by_bytes(100, 2 * size);
  by_bytes.Get(parser, "/a.py", kModel, {});
  by_bytes.Get(parser, "/b.py", kModel, {});
  by_bytes.Get(parser, "/c.py", kModel, {});
  EXPECT_EQ(by_bytes.stats().entries, 2u);
  EXPECT_EQ(by_bytes.stats().source_bytes, 2 * size);
}

// New limits evict at once, least recently used first; 0 entries keeps nothing.
TEST(ParseCacheTest, NewLimitsEvictAtOnce) {
  PythonParser parser;
  ParseCache cache(8, 1 << 20);
  for (const char* path : {"/a.py", "/b.py", "/c.py"}) cache.Get(parser, path, kModel, {});
  auto c = cache.Get(parser, "/c.py", kModel, {});
  cache.SetLimits(1, 1 << 20);
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.Get(parser, "/c.py", kModel, {}).get(), c.get());  // the most recent stayed

  cache.SetLimits(0, 1 << 20);
  EXPECT_EQ(cache.stats().entries, 0u);
  cache.Get(parser, "/c.py", kModel, {});
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().source_bytes, 0u);
}

TEST(ParseCacheTest, WhatDidNotParseIsNotKept) {
  ParseCache cache(8, 1 << 20);
  PythonParser parser;
  ParseLimits tiny;
  tiny.max_bytes = 10;  // "not scanned: over the limit": no tree, nothing to keep
  auto a = cache.Get(parser, "/p/m.py", kModel, tiny);
  EXPECT_FALSE(a->index.has_value());
  EXPECT_FALSE(a->parsed.diagnostics.empty());
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(ParseCacheTest, ScansThroughTheCacheFindWhatScansWithoutItFind) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"/p/model.py", kModel},
      {"/p/util.py", "import torch\n\ndef helper(t):\n    t.add_(1)\n    return t\n"}};
  const LintResult plain = LintFiles(files);
  ASSERT_FALSE(plain.findings.empty());
  ParseCache cache(8, 1 << 20);
  LintOptions options;
  options.cache = &cache;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::string>> found(8);
  for (size_t t = 0; t < found.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) found[t] = Found(LintFiles(files, options));
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::vector<std::string>& f : found) EXPECT_EQ(f, Found(plain));
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_GE(cache.stats().hits, 8u * 20 * 2 - 16);  // every thread may miss each file once
}

}  // namespace
}  // namespace cl::lint
