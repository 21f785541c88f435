// `# compile-lens: ignore[id]` and `ignore-file[id]`, and torch version strings and specifiers.
#include "lint/suppressions.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lint/torch_version.h"
#include "tests/lint/lint_testing.h"

namespace cl::lint {
namespace {

using namespace ::cl::lint::testing;  // NOLINT(build/namespaces): the helpers and matchers

TEST(SuppressionsTest, LineAndFileMarkers) {
  const Suppressions s = Suppressions::Scan(
      "x = 1  # compile-lens: ignore[a, b]\n"
      "y = 2\n"
      "s = \"compile-lens: ignore[c]\"\n"
      "# compile-lens: ignore-file[d]\n"
      "z = 3  # compile-lens:ignore[*]\n");
  EXPECT_TRUE(s.Suppressed("a", 1));
  EXPECT_TRUE(s.Suppressed("b", 1));
  EXPECT_FALSE(s.Suppressed("c", 1));
  EXPECT_FALSE(s.Suppressed("a", 2));
  EXPECT_FALSE(s.Suppressed("c", 3));  // in a string, not a comment
  EXPECT_TRUE(s.Suppressed("d", 2));
  EXPECT_TRUE(s.Suppressed("anything", 5));
}

TEST(SuppressionsTest, SuppressedFindingsAreCountedNotReported) {
  const LintResult r = LintCode(R"py(import random
import torch
@torch.compile
def f(x):
    y = x
    z = y.view(-1)
    z.mul_(0.5)  # compile-lens: ignore[in_place_op_on_alias]
    a = random.random()  # compile-lens: ignore[torch_rng_parity]
    return y * a
)py");
  EXPECT_THAT(Found(r), ElementsAre("python_random_in_compiled:8"));
  EXPECT_EQ(r.suppressed, 1u);

  const LintResult whole =
      LintCode(R"py(# compile-lens: ignore-file[python_random_in_compiled, in_place_op_on_alias]
import random
import torch
@torch.compile
def f(x):
    z = x.view(-1)
    z.mul_(0.5)
    return x * random.random()
)py");
  EXPECT_THAT(Found(whole), IsEmpty());
  EXPECT_EQ(whole.suppressed, 2u);
}

TEST(TorchVersionTest, ParsesRealVersionStrings) {
  for (const char* v : {"2.6.0", "2.6.0+debian", "2.5.0a0+git1234", "2.7.0.dev20250101", "2.4",
                        "v2.1.2", "2.3.0rc1", "2.1.0.post1"}) {
    EXPECT_TRUE(TorchVersion::Parse(v).has_value()) << v;
  }
  for (const char* v : {"", "nightly", "x2.1", "2.x"})
    EXPECT_FALSE(TorchVersion::Parse(v).has_value()) << v;
  EXPECT_EQ(Compare(*TorchVersion::Parse("2.6.0+debian"), *TorchVersion::Parse("2.6")), 0);
  EXPECT_LT(Compare(*TorchVersion::Parse("2.6.0rc1"), *TorchVersion::Parse("2.6.0")), 0);
  EXPECT_LT(Compare(*TorchVersion::Parse("2.10.0"), *TorchVersion::Parse("2.11")), 0);
  EXPECT_GT(Compare(*TorchVersion::Parse("2.10.0"), *TorchVersion::Parse("2.9.1")), 0);
}

TEST(TorchVersionTest, Specifiers) {
  std::string error;
  auto in = [&](const char* spec, const char* version) {
    std::optional<VersionSpecifier> s = VersionSpecifier::Parse(spec, &error);
    EXPECT_TRUE(s.has_value()) << spec << ": " << error;
    return s && s->Contains(*TorchVersion::Parse(version));
  };
  EXPECT_TRUE(in(">=2.1,<2.6", "2.5.1"));
  EXPECT_FALSE(in(">=2.1,<2.6", "2.6.0+debian"));
  EXPECT_FALSE(in(">=2.1,<2.6", "2.0.1"));
  EXPECT_TRUE(in("==2.1.*", "2.1.2"));
  EXPECT_FALSE(in("==2.1.*", "2.2.0"));
  EXPECT_TRUE(in("!=2.3.0", "2.3.1"));
  EXPECT_TRUE(in("~=2.1.3", "2.1.9"));
  EXPECT_FALSE(in("~=2.1.3", "2.2.0"));
  EXPECT_TRUE(in("<=2.3", "2.3.0"));
  EXPECT_FALSE(VersionSpecifier::Parse("2.1", &error).has_value());
  EXPECT_FALSE(VersionSpecifier::Parse(">=two", &error).has_value());
  EXPECT_FALSE(VersionSpecifier::Parse(">=2.*", &error).has_value());
}

}  // namespace
}  // namespace cl::lint
