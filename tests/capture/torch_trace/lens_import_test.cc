// What the importer reads beyond torch's compile events: the guard tree of each cache entry
// (dynamo_cpp_guards_str → Compile.guarded_sources) and the records the compile_lens Python
// package writes as artifacts (compile_lens_iteration, compile_lens_divergence,
// compile_lens_source). Hand-written logs in torch's exact shape, each malformed case a diagnostic
// naming its line, and the real hero trace.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "capture/guarded_sources.h"
#include "capture/torch_trace/guard_tree.h"
#include "capture/torch_trace/importer.h"
#include "capture/validate.h"
#include "common/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Builds a TORCH_TRACE log the way torch writes it: a glog header with the record's JSON and,
// when there is a payload, `has_payload` (its md5) and the payload's lines, each after a tab.
class Log {
 public:
  // Appends a record; returns the line of its header.
  int Add(const std::string& json, const std::string* payload = nullptr) {
    const int header = ++lines_;
    std::string metadata = json;
    if (payload != nullptr) {
      metadata.pop_back();  // the closing brace
      absl::StrAppend(&metadata, ", \"has_payload\": \"", Md5Hex(*payload), "\"}");
    }
    absl::StrAppend(&text_, "V1129 14:05:15.475000 21946 torch/_dynamo/guards.py:2318] ", metadata,
                    "\n");
    if (payload != nullptr) {
      for (absl::string_view line : absl::StrSplit(*payload, '\n')) {
        absl::StrAppend(&text_, "\t", line, "\n");
        ++lines_;
      }
    }
    return header;
  }
  int Add(const std::string& json, const std::string& payload) { return Add(json, &payload); }

  // A compile_lens_<kind> artifact, as compile_lens._artifacts.emit writes it (no compile id).
  int Artifact(const std::string& name, const std::string& payload,
               const std::string& encoding = "json") {
    return Add(
        absl::StrCat(R"({"artifact": {"name": ")", name, R"(", "encoding": ")", encoding, R"("}})"),
        payload);
  }

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int lines_ = 0;
};

// A compile of frame 0 named `forward`, as torch opens and closes it.
void AddCompile(Log& log, int frame_compile_id) {
  const std::string id =
      absl::StrCat(R"("frame_id": 0, "frame_compile_id": )", frame_compile_id, R"(, "attempt": 0)");
  log.Add(absl::StrCat(
      R"({"dynamo_start": {"stack": [{"line": 86, "name": "forward", "filename": "/p/m.py"}]}, )",
      id, "}"));
  log.Add(absl::StrCat(R"({"compilation_metrics": {"co_name": "forward", "graph_op_count": 3}, )",
                       id, "}"));
}

v1::SessionCapture Import(const std::string& text) {
  TraceImporter importer;
  importer.Feed(text);
  v1::SessionCapture c = importer.Finish();
  EXPECT_TRUE(ValidateCapture(c).ok()) << ValidateCapture(c);
  return c;
}

std::vector<std::string> Diagnostics(const v1::SessionCapture& c) {
  std::vector<std::string> out;
  for (const v1::Diagnostic& d : c.diagnostics()) {
    out.push_back(absl::StrCat(v1::Diagnostic::Severity_Name(d.severity()), " ", d.where(), ": ",
                               d.message()));
  }
  return out;
}

// The sources compile `i`'s guards read, through its frame's table.
std::vector<std::string> Guarded(const v1::SessionCapture& c, int i) {
  const v1::Compile& compile = c.compiles(i);
  auto frame = std::find_if(c.frames().begin(), c.frames().end(),
                            [&](const v1::Frame& f) { return f.id() == compile.frame_id(); });
  std::vector<std::string> out;
  for (absl::string_view source :
       GuardedSources(frame == c.frames().end() ? nullptr : &*frame, compile))
    out.emplace_back(source);
  return out;
}

std::vector<std::string> ExtraKinds(const v1::SessionCapture& c) {
  std::vector<std::string> out;
  for (const v1::Extra& x : c.extras()) out.push_back(x.kind());
  return out;
}

// The guard tree of a module with one submodule, in torch 2.6's shape (examples/hero/traces).
constexpr char kGuardTree[] = R"(
TREE_GUARD_MANAGER:
+- RootGuardManager
| +- DEFAULT_DEVICE: utils_device.CURRENT_DEVICE == None                           # _dynamo/output_graph.py:493 in init_ambient_guards
| +- GLOBAL_STATE: ___check_global_state()
| +- TORCH_FUNCTION_MODE_STACK: ___check_torch_function_mode_stack()
| +- GuardManager: source=L['x'], accessed_by=DictGetItemGuardAccessor('x')
| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[16, 64], stride=[64, 1])
| | +- NO_TENSOR_ALIASING: check_no_aliasing(L['x'], L['resid'])
| +- GuardManager: source=L['self'], accessed_by=DictGetItemGuardAccessor('self')
| | +- TYPE_MATCH: ___check_type_id(L['self'], 36008704)
| | +- GuardManager: source=L['self']._modules, accessed_by=DictGetItemGuardAccessor('_modules')
| | | +- DictGuardManager: source=L['self']._modules['blocks']._modules, accessed_by=DictGetItemGuardAccessor('_modules')
| | | | +- KeyManager: GuardManager: source=list(L['self']._modules['blocks']._modules.keys())[0]
| | | | +- ValueManager: GuardManager: source=L['self']._modules['blocks']._modules['0']
| | | | | +- EQUALS_MATCH: L['self']._modules['blocks']._modules['0'].tag == 'a: source=b'
| | | | | +- GuardManager: source=L['self']._modules['blocks']._modules['0'].eps, accessed_by=DictGetItemGuardAccessor('eps')
| +- GuardManager: source=G, accessed_by=GlobalsGuardAccessor
| | +- GuardManager: source=G['scale'], accessed_by=DictGetItemGuardAccessor('scale')
| | +- GuardManager: source=L['x'], accessed_by=DictGetItemGuardAccessor('x'))";

// --- Guard trees ----------------------------------------------------------------------------

TEST(GuardTreeTest, ManagerSourcesInOrderOfFirstAppearance) {
  const GuardTreeSources read = ReadGuardSources(kGuardTree);
  EXPECT_TRUE(read.has_tree);
  EXPECT_THAT(read.problems, IsEmpty());
  EXPECT_THAT(read.sources,
              ElementsAre("GLOBAL_STATE", "L['x']", "L['self']", "L['self']._modules",
                          "L['self']._modules['blocks']._modules",
                          "list(L['self']._modules['blocks']._modules.keys())[0]",
                          "L['self']._modules['blocks']._modules['0']",
                          "L['self']._modules['blocks']._modules['0'].eps", "G", "G['scale']"));
}

TEST(GuardTreeTest, NoGlobalStateGuardNoGlobalStateSource) {
  const GuardTreeSources read = ReadGuardSources(
      "TREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- GuardManager: source=L['x']");
  EXPECT_THAT(read.sources,
              ElementsAre("L['x']"));  // no ", accessed_by": the source runs to the end
}

TEST(GuardTreeTest, AnEmptySourceIsAProblemOnItsLine) {
  const GuardTreeSources read = ReadGuardSources(
      "TREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- GuardManager: source=, accessed_by=X");
  EXPECT_THAT(read.sources, IsEmpty());
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_EQ(read.problems[0].line, 2u);
  EXPECT_EQ(read.problems[0].what, "a guard manager line names an empty source");
  EXPECT_FALSE(ReadGuardSources("no tree here\n").has_tree);
}

TEST(LensImportTest, GuardTreeGivesTheCompileItsGuardedSources) {
  Log log;
  AddCompile(log, 0);
  log.Add(R"({"dynamo_cpp_guards_str": {}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0})",
          kGuardTree);
  const v1::SessionCapture c = Import(log.text());
  ASSERT_EQ(c.compiles_size(), 1);
  EXPECT_THAT(Guarded(c, 0), Contains("GLOBAL_STATE"));
  EXPECT_THAT(Guarded(c, 0), Contains("G['scale']"));
  EXPECT_EQ(GuardedSourceCount(c.compiles(0)), 10);
  EXPECT_THAT(ExtraKinds(c), Not(Contains("dynamo_cpp_guards_str")));
  EXPECT_THAT(absl::StrJoin(Diagnostics(c), "\n"), Not(HasSubstr("WARNING")));
}

TEST(LensImportTest, RecompilesOfAFrameShareItsGuardedSourcesText) {
  Log log;
  AddCompile(log, 0);
  log.Add(R"({"dynamo_cpp_guards_str": {}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0})",
          kGuardTree);
  AddCompile(log, 1);
  log.Add(
      R"({"dynamo_cpp_guards_str": {}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0})",
      absl::StrCat(kGuardTree,
                   "\n| +- GuardManager: source=L['mask'], accessed_by=DictGetItemGuardAccessor("
                   "'mask')\n"));
  const v1::SessionCapture c = Import(log.text());
  ASSERT_EQ(c.compiles_size(), 2);
  ASSERT_EQ(c.frames_size(), 1);
  // Each source is kept once, in the frame; the compiles hold indexes into it.
  EXPECT_EQ(c.frames(0).guarded_sources_size(), 11);
  EXPECT_THAT(c.compiles(0).guarded_sources(), IsEmpty());
  EXPECT_EQ(c.compiles(0).guarded_source_ids_size(), 10);
  EXPECT_EQ(c.compiles(1).guarded_source_ids_size(), 11);
  std::vector<std::string> first = Guarded(c, 0);
  first.push_back("L['mask']");
  EXPECT_EQ(Guarded(c, 1), first);
}

TEST(LensImportTest, MalformedGuardRecordsAreDiagnosedByLine) {
  Log log;
  AddCompile(log, 0);
  const int no_compile = log.Add(R"({"dynamo_cpp_guards_str": {}})", kGuardTree);
  const int no_tree =
      log.Add(R"({"dynamo_cpp_guards_str": {}, "frame_id": 0, "frame_compile_id": 0})",
              "guards went missing");
  const int empty_source =
      log.Add(R"({"dynamo_cpp_guards_str": {}, "frame_id": 0, "frame_compile_id": 0})",
              "\nTREE_GUARD_MANAGER:\n+- RootGuardManager\n"
              "| +- GuardManager: source=, accessed_by=X\n"
              "| +- GuardManager: source=L['y'], accessed_by=DictGetItemGuardAccessor('y')");
  const v1::SessionCapture c = Import(log.text());
  const std::vector<std::string> d = Diagnostics(c);
  EXPECT_THAT(d, Contains(absl::StrCat("WARNING trace:", no_compile,
                                       ": dynamo_cpp_guards_str names no compile (skipped)")));
  EXPECT_THAT(d,
              Contains(absl::StrCat(
                  "WARNING trace:", no_tree,
                  ": dynamo_cpp_guards_str payload holds no guard tree (no \"+- \" node line)")));
  // The empty source is on the fourth payload line, after the header.
  EXPECT_THAT(d,
              Contains(absl::StrCat("WARNING trace:", empty_source + 4,
                                    ": dynamo_cpp_guards_str: a guard manager line names an empty ",
                                    "source (skipped)")));
  // The rest of that tree still counts; the tree without guard lines left the compile as it was.
  ASSERT_EQ(c.compiles_size(), 1);
  EXPECT_THAT(Guarded(c, 0), ElementsAre("L['y']"));
  EXPECT_THAT(ExtraKinds(c), IsEmpty());
}

// --- compile_lens artifacts -------------------------------------------------------------------

TEST(LensImportTest, IterationsAppendInLogOrder) {
  Log log;
  AddCompile(log, 0);
  log.Artifact("compile_lens_iteration",
               R"({"index": 0, "frame_id": 0, "compile_id": "0/0", "recompiled": true,
  "state": {"model.training": "True"}, "output_max_abs_diff": 0.0, "output_diverged": false})");
  // lowerCamelCase names are proto3 JSON too.
  log.Artifact(
      "compile_lens_iteration",
      R"({"index": 1, "frameId": 0, "compileId": "0/0", "outputDiverged": true, "outputMaxAbsDiff": 7.178})");
  const v1::SessionCapture c = Import(log.text());
  ASSERT_EQ(c.iterations_size(), 2);
  EXPECT_TRUE(c.iterations(0).recompiled());
  EXPECT_EQ(c.iterations(0).state().at("model.training"), "True");
  EXPECT_TRUE(c.iterations(0).has_output_diverged());
  EXPECT_FALSE(c.iterations(0).output_diverged());
  EXPECT_EQ(c.iterations(1).index(), 1u);
  EXPECT_TRUE(c.iterations(1).output_diverged());
  EXPECT_EQ(c.iterations(1).output_max_abs_diff(), 7.178);
  EXPECT_THAT(ExtraKinds(c), IsEmpty());
  EXPECT_THAT(absl::StrJoin(Diagnostics(c), "\n"), Not(HasSubstr("WARNING")));
}

TEST(LensImportTest, ASecondDivergenceReplacesTheFirstWithAWarning) {
  Log log;
  log.Artifact(
      "compile_lens_divergence",
      R"({"reference": "eager", "layers": [{"name": "blocks.0.norm", "order": 0, "diverged": true}]})");
  const int second = log.Artifact(
      "compile_lens_divergence",
      R"({"reference": "eager", "torch_version": "2.6.0", "layers": [{"name": "blocks.1.norm", "order": 1}],
  "bisect": {"culprit": {"kind": "CONFIG", "name": "fallback_random", "confidence": 1.0}}})");
  const v1::SessionCapture c = Import(log.text());
  ASSERT_TRUE(c.has_divergence());
  ASSERT_EQ(c.divergence().layers_size(), 1);
  EXPECT_EQ(c.divergence().layers(0).name(), "blocks.1.norm");
  EXPECT_EQ(c.divergence().torch_version(), "2.6.0");
  EXPECT_EQ(c.divergence().bisect().culprit().kind(), v1::BisectCulprit::CONFIG);
  EXPECT_THAT(Diagnostics(c), Contains(absl::StrCat(
                                  "WARNING trace:", second,
                                  ": a second compile_lens_divergence record replaces the first")));
}

TEST(LensImportTest, SourcesAreHashedAndReplacedByPath) {
  const std::string text = "def forward(self, x):\n    return x\n";
  Log log;
  log.Artifact("compile_lens_source", R"({"path": "/p/a.py", "text": "old"})");
  log.Artifact(
      "compile_lens_source",
      absl::StrCat(R"({"path": "/p/b.py", "text": "b", "sha256": ")", Sha256Hex("b"), "\"}"));
  const int wrong =
      log.Artifact("compile_lens_source",
                   R"({"path": "/p/a.py", "text": "def forward(self, x):\n    return x\n", )"
                   R"("sha256": "0000"})");
  const v1::SessionCapture c = Import(log.text());
  ASSERT_EQ(c.sources_size(), 2);
  EXPECT_EQ(c.sources(0).path(), "/p/a.py");
  EXPECT_EQ(c.sources(0).text(), text);
  EXPECT_EQ(c.sources(0).sha256(), Sha256Hex(text));
  EXPECT_EQ(c.sources(1).sha256(), Sha256Hex("b"));
  EXPECT_THAT(Diagnostics(c),
              Contains(absl::StrCat("WARNING trace:", wrong,
                                    ": compile_lens_source \"/p/a.py\": sha256 does not match the "
                                    "text (kept the text, with its own hash)")));
  // b.py's correct hash drew no warning: only a.py's wrong one did.
  const std::vector<std::string> d = Diagnostics(c);
  EXPECT_EQ(
      std::count_if(d.begin(), d.end(),
                    [](const std::string& s) { return s.find("sha256") != std::string::npos; }),
      1);
}

TEST(LensImportTest, InvalidPayloadsAreDiagnosedAndSkipped) {
  Log log;
  AddCompile(log, 0);
  const int not_json = log.Artifact("compile_lens_iteration", "{\"index\": 1,");
  const int unknown =
      log.Artifact("compile_lens_iteration", R"({"index": 2, "frame_id": 0, "stat": {}})");
  const int wrong_type = log.Artifact("compile_lens_iteration", R"({"index": "two"})");
  const int unnamed =
      log.Artifact("compile_lens_divergence", R"({"layers": [{"name": "a"}, {"order": 1}]})");
  const int pathless = log.Artifact("compile_lens_source", R"({"text": "x"})");
  const int base64 = log.Artifact("compile_lens_source", R"({"path": "/p/a.py"})", "base64");
  const int dangling =
      log.Artifact("compile_lens_iteration", R"({"index": 7, "frame_id": 0, "compile_id": "0/9"})");
  const int no_frame = log.Artifact("compile_lens_iteration", R"({"index": 8, "frame_id": 3})");
  log.Artifact("compile_lens_iteration", R"({"index": 9, "frame_id": 0, "compile_id": "0/0"})");
  const v1::SessionCapture c = Import(log.text());
  const std::vector<std::string> d = Diagnostics(c);
  const std::string all = absl::StrJoin(d, "\n");
  auto expect = [&](int line, const std::string& start) {
    const std::string prefix = absl::StrCat("WARNING trace:", line, ": ", start);
    EXPECT_TRUE(std::any_of(d.begin(), d.end(),
                            [&](const std::string& s) { return s.rfind(prefix, 0) == 0; }))
        << "no diagnostic starting " << prefix << " in\n"
        << all;
  };
  expect(not_json, "compile_lens_iteration payload is not valid: ");
  expect(unknown, "compile_lens_iteration payload is not valid: ");
  EXPECT_THAT(all, HasSubstr("stat"));  // protobuf's own message names the unknown field
  expect(wrong_type, "compile_lens_iteration payload is not valid: ");
  expect(unnamed, "compile_lens_divergence payload is not valid: layers[1].name is empty");
  expect(pathless, "compile_lens_source payload is not valid: path is empty");
  expect(
      base64,
      "compile_lens_source payload is not valid: encoding is \"base64\", not \"json\" (skipped)");
  expect(dangling,
         "compile_lens_iteration 7 names compile \"0/9\", which this log never compiled (skipped)");
  expect(no_frame,
         "compile_lens_iteration 8 names frame 3, which this log never compiled (skipped)");
  EXPECT_THAT(d, Contains("WARNING trace: import: 6 compile_lens records not valid (skipped)"));
  EXPECT_THAT(d, Contains("WARNING trace: import: 2 compile_lens iterations naming no compile of "
                          "the log (skipped)"));
  // Only the good iteration is kept; nothing half-parsed, nothing in extras.
  ASSERT_EQ(c.iterations_size(), 1);
  EXPECT_EQ(c.iterations(0).index(), 9u);
  EXPECT_FALSE(c.has_divergence());
  EXPECT_EQ(c.sources_size(), 0);
  EXPECT_THAT(ExtraKinds(c), IsEmpty());
}

TEST(LensImportTest, EmbeddedSourcesWinOverTheFilesOnDisk) {
  const fs::path dir = fs::path(::testing::TempDir()) / "lens_import_sources";
  fs::create_directories(dir);
  const std::string file = (dir / "m.py").string();
  std::ofstream(file) << "the file on disk, edited since\n";
  Log log;
  log.Add(
      absl::StrCat(R"({"dynamo_start": {"stack": [{"line": 1, "name": "forward", "filename": ")",
                   file, R"("}]}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0})"));
  log.Artifact("compile_lens_source",
               absl::StrCat(R"({"path": ")", file, R"(", "text": "what the program ran\n"})"));
  const std::string log_path = (dir / "trace.log").string();
  std::ofstream(log_path) << log.text();
  ImportOptions options;
  options.read_sources = true;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(log_path, options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->sources_size(), 1);
  EXPECT_EQ(c->sources(0).path(), file);
  EXPECT_EQ(c->sources(0).text(), "what the program ran\n");
  EXPECT_EQ(c->sources(0).sha256(), Sha256Hex("what the program ran\n"));
}

// --- The real hero trace --------------------------------------------------------------------

TEST(LensImportTest, HeroTraceCompilesCarryTheirGuardedSources) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c =
      ImportTraceFile(CL_SOURCE_DIR "/examples/hero/traces/head.log", options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->compiles_size(), 4);
  EXPECT_EQ(c->compiles(0).id(), "0/0");
  EXPECT_THAT(Guarded(*c, 0), Contains("L['x']"));
  EXPECT_THAT(Guarded(*c, 0), Contains("GLOBAL_STATE"));
  EXPECT_THAT(
      Guarded(*c, 0),
      Contains(
          "L['self']._modules['blocks']._modules['0']._modules['norm']._parameters['weight']"));
  for (int i = 0; i < c->compiles_size(); ++i) EXPECT_THAT(Guarded(*c, i), Not(IsEmpty())) << i;
  EXPECT_THAT(ExtraKinds(*c), Not(Contains("dynamo_cpp_guards_str")));
  EXPECT_TRUE(ValidateCapture(*c).ok());
}

}  // namespace
}  // namespace cl
