#include "analyzers/recompile/recompile.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzers/registry.h"
#include "common/file_io.h"
#include "common/proto_json.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report_words.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/golden.h"
#include "tests/testing/import_fixture.h"
#include "tests/testing/run_pass.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::cl::testing::IsOk;
using ::cl::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kGoldenDir = std::string(CL_SOURCE_DIR) + "/tests/golden/recompile";

v1::SessionCapture LoadCapture(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  v1::SessionCapture capture;
  if (text.ok()) {
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &capture).ok()) << path;
  }
  return capture;
}

// The section as the JSON report prints it (original field names, every field, enum words).
std::string SectionJson(const v1::RecompileSection& section) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  absl::StatusOr<std::string> json = ToDeterministicJson(section, options, ReportTypes());
  EXPECT_TRUE(json.ok()) << json.status();
  return json.ok() ? *json : "";
}

v1::RecompileSection RunPass(const v1::SessionCapture& capture,
                             v1::AnalysisReport* report = nullptr) {
  return ::cl::testing::RunPassOk(RecompilePass(), capture, report).recompile();
}

std::vector<std::string> Transitions(const v1::RecompileCluster& cluster) {
  return {cluster.transitions().begin(), cluster.transitions().end()};
}

v1::Compile* AddCompile(v1::SessionCapture* capture, uint32_t frame, uint32_t n,
                        std::vector<std::string> reasons = {}) {
  v1::Compile* compile = capture->add_compiles();
  compile->set_id(std::to_string(frame) + "/" + std::to_string(n));
  compile->set_frame_id(frame);
  compile->set_frame_compile_id(n);
  compile->set_status(v1::Compile::OK);
  for (std::string& r : reasons) compile->add_recompile_reasons(std::move(r));
  return compile;
}

void SetDynamoConfig(v1::Compile* compile, const std::string& json) {
  (*compile->mutable_metrics()->mutable_fields())["dynamo_config"].set_string_value(json);
}

// A capture of one frame, `name`, compiled once (0/0) under torch's default automatic dynamic.
v1::SessionCapture FrameCompiledOnce(const char* name) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name(name);
  SetDynamoConfig(AddCompile(&capture, 0, 0), R"({"automatic_dynamic_shapes": true})");
  return capture;
}

// The hero scene (fixtures/torch_trace/torch-2.6/rmsnorm_blocks-base): compiled with
// dynamic=False and called with batch 16, 32, 64, 128. Its recompile section is the seed's.
TEST(RecompilePassTest, HeroSectionMatchesTheSeedAndTheGolden) {
  const v1::RecompileSection section = RunPass(LoadCapture(kGoldenDir + "/hero_capture.json"));

  EXPECT_EQ(section.status(), v1::OK);
  EXPECT_EQ(section.total(), 3u);
  EXPECT_EQ(section.categories(), 1u);
  EXPECT_EQ(section.frame().name(), "forward");
  EXPECT_EQ(section.frame().location().file(), "examples/hero_scene.py");
  EXPECT_EQ(section.frame().location().line(), 86u);
  EXPECT_EQ(section.frame().recompiles(), 3u);
  ASSERT_EQ(section.clusters_size(), 1);
  const v1::RecompileCluster& cluster = section.clusters(0);
  EXPECT_EQ(Word(cluster.category()), "size");
  EXPECT_EQ(cluster.count(), 3u);
  EXPECT_EQ(cluster.variable(), "x");
  EXPECT_EQ(cluster.axis(), "x[0]");
  EXPECT_THAT(Transitions(cluster), ElementsAre("16→32", "16→64", "16→128"));
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_EQ(section.suggestions(0).text(),
            "`x` dim 0 keeps changing size — mark it dynamic to stop the recompiles: "
            "`torch._dynamo.mark_dynamic(x, 0)` (or compile with `dynamic=True`).");
  EXPECT_EQ(section.suggestions(0).evidence(),
            "size cluster on x[0] — 3 recompiles (values 16→32, 16→64, 16→128)");
  EXPECT_EQ(section.cache_limit_hits_size(), 0);
  EXPECT_EQ(section.graph_breaks_size(), 0);
  EXPECT_EQ(section.reasons_size(), 6);

  ::cl::testing::ExpectMatchesGolden("recompile/hero_recompile.json", SectionJson(section) + "\n");
}

// A GPT compiled with dynamic=False, called with idx (2, 16), then (4, 16), then (4, 32): the
// second recompile is the sequence length, idx[1] 16→32 against the newest entry, though its
// bullet against the first entry names idx[0] (torch stops at the first failing guard). Both
// dimensions get one suggestion between them.
TEST(RecompilePassTest, EachRecompileIsFiledUnderWhatNoEntryHad) {
  v1::SessionCapture capture;
  v1::Frame* frame = capture.add_frames();
  frame->set_name("forward");
  SetDynamoConfig(AddCompile(&capture, 0, 0),
                  R"({"automatic_dynamic_shapes": false, "recompile_limit": 8})");
  AddCompile(&capture, 0, 1,
             {"0/0: tensor 'L['idx']' size mismatch at index 0. expected 2, actual 4"});
  AddCompile(&capture, 0, 2,
             {"0/1: tensor 'L['idx']' size mismatch at index 1. expected 16, actual 32",
              "0/0: tensor 'L['idx']' size mismatch at index 0. expected 2, actual 4"});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 2);
  EXPECT_EQ(section.clusters(0).axis(), "idx[0]");
  EXPECT_EQ(section.clusters(0).count(), 1u);
  EXPECT_THAT(Transitions(section.clusters(0)), ElementsAre("2→4"));
  EXPECT_EQ(section.clusters(1).axis(), "idx[1]");
  EXPECT_EQ(section.clusters(1).count(), 1u);
  EXPECT_THAT(Transitions(section.clusters(1)), ElementsAre("16→32"));
  // Every entry's failure stays as evidence.
  EXPECT_EQ(section.reasons_size(), 3);
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(),
              HasSubstr("`torch._dynamo.mark_dynamic(idx, 0)` and "
                        "`torch._dynamo.mark_dynamic(idx, 1)` (or compile with `dynamic=True`)"));
  EXPECT_THAT(section.suggestions(0).evidence(), HasSubstr("idx[0]"));
  EXPECT_THAT(section.suggestions(0).evidence(), HasSubstr("idx[1]"));
}

// A resume function recompiling on `___stack0`: the value a graph break (`.item()` in an `if`)
// left on the stack, not a name the user wrote; the advice says what it is (guard text from a
// real torch 2.6 log of a KV-cache decode loop).
TEST(RecompilePassTest, AValueTheGraphBreakLeftOnTheStackIsExplained) {
  v1::SessionCapture capture;
  v1::Frame* frame = capture.add_frames();
  frame->set_name("torch_dynamo_resume_in_forward_at_51");
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, {"0/0: L['___stack0'] == 1.6096662282943726                        "});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(),
              HasSubstr("`___stack0` is the value the graph break before "
                        "`torch_dynamo_resume_in_forward_at_51` handed to the code after it"));
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("capture_scalar_outputs = True"));
  // A frame of the user's own keeps the advice for a Python constant.
  frame->set_name("forward");
  EXPECT_THAT(RunPass(capture).suggestions(0).text(), HasSubstr("is a Python constant"));
}

// The facts of fixtures/torch_trace/torch-2.6/dynamic: automatic dynamic shapes, then grad mode,
// then a bf16 copy of the module through the same code object.
TEST(RecompilePassTest, DynamicSceneFilesEachRecompileUnderItsPrimaryReason) {
  v1::SessionCapture capture;
  capture.mutable_session()->set_project_root("/opt/scenes");
  v1::Frame* frame = capture.add_frames();
  frame->set_name("forward");
  frame->set_file("/opt/scenes/dynamic.py");
  frame->set_line(14);
  SetDynamoConfig(AddCompile(&capture, 0, 0),
                  R"({"automatic_dynamic_shapes": true, "recompile_limit": 8})");
  AddCompile(&capture, 0, 1,
             {"0/0: tensor 'L['x']' size mismatch at index 0. expected 4, actual 8"});
  AddCompile(&capture, 0, 2,
             {"0/1: GLOBAL_STATE changed: grad_mode ", "0/0: GLOBAL_STATE changed: grad_mode "});
  AddCompile(&capture, 0, 3,
             {"0/2: GLOBAL_STATE changed: grad_mode ",
              "0/1: tensor 'L['x']' dtype mismatch. expected Float, actual BFloat16",
              "0/0: tensor 'L['x']' dtype mismatch. expected Float, actual BFloat16"});

  const v1::RecompileSection section = RunPass(capture);
  EXPECT_EQ(section.total(), 3u);
  EXPECT_EQ(section.categories(), 3u);
  EXPECT_EQ(section.reasons_size(), 6);
  EXPECT_EQ(section.frame().location().file(), "dynamic.py");
  ASSERT_EQ(section.clusters_size(), 3);
  EXPECT_EQ(Word(section.clusters(0).category()), "size");
  EXPECT_THAT(Transitions(section.clusters(0)), ElementsAre("4→8"));
  EXPECT_EQ(Word(section.clusters(1).category()), "global_state");
  EXPECT_EQ(section.clusters(1).axis(), "grad_mode");
  // 0/3's bullet against the first entry (0/0) is the dtype change, not the newest grad_mode one.
  EXPECT_EQ(Word(section.clusters(2).category()), "dtype");
  EXPECT_EQ(section.clusters(2).axis(), "x");
  EXPECT_THAT(Transitions(section.clusters(2)), ElementsAre("Float→BFloat16"));

  // One automatic-dynamic size recompile and one grad-mode flip (a no_grad call beside training
  // ones; both graphs stay cached) are expected behaviour: listed last, as information.
  ASSERT_EQ(section.suggestions_size(), 3);
  EXPECT_EQ(Word(section.suggestions(0).category()), "dtype");
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("`x.to(torch.float32)`"));
  EXPECT_EQ(section.suggestions(0).evidence(),
            "dtype cluster on x — 1 recompile (values Float→BFloat16)");
  std::map<std::string, const v1::Suggestion*> expected;
  for (int i = 1; i < 3; ++i)
    expected[std::string(Word(section.suggestions(i).category()))] = &section.suggestions(i);
  ASSERT_TRUE(expected.contains("global_state") && expected.contains("size"));
  EXPECT_THAT(expected["global_state"]->text(), HasSubstr("torch.no_grad()"));
  EXPECT_THAT(expected["global_state"]->text(),
              HasSubstr("expected once where the loop does both"));
  EXPECT_THAT(expected["size"]->text(), HasSubstr("automatic dynamic"));
  EXPECT_THAT(expected["size"]->evidence(), HasSubstr("automatic_dynamic_shapes=True"));
  // The cluster and its suggestion say so in fields, for the verdict and the renderers.
  EXPECT_TRUE(section.clusters(0).expected());
  EXPECT_TRUE(section.clusters(1).expected());
  EXPECT_FALSE(section.clusters(2).expected());
  EXPECT_FALSE(section.suggestions(0).expected());
  EXPECT_TRUE(section.suggestions(1).expected());
  EXPECT_TRUE(section.suggestions(2).expected());
}

// A block called in train mode, then in eval mode under no_grad, then in eval mode with grad on,
// then with a new int (a sandbox scene's reasons, verbatim): 0/2 shows grad mode against 0/1 and
// the dropout's training flag against 0/0, and is filed under one (the newest entry's). The other
// is still said, once, on the frame's largest cluster.
TEST(RecompilePassTest, AGuardNoRecompileIsFiledUnderIsStillSaid) {
  v1::SessionCapture capture = FrameCompiledOnce("forward");
  AddCompile(&capture, 0, 1, {"0/0: GLOBAL_STATE changed: grad_mode "});
  AddCompile(&capture, 0, 2,
             {"0/1: GLOBAL_STATE changed: grad_mode ",
              "0/0: ___check_obj_id(L['self']._modules['drop'].training, 10519872)"});
  AddCompile(&capture, 0, 3,
             {"0/2: L['scale'] == 1", "0/1: GLOBAL_STATE changed: grad_mode ",
              "0/0: ___check_obj_id(L['self']._modules['drop'].training, 10519872)"});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 2);
  EXPECT_EQ(section.clusters(0).axis(), "grad_mode");
  EXPECT_EQ(section.clusters(0).count(), 2u);
  EXPECT_EQ(section.clusters(1).axis(), "scale");
  ASSERT_EQ(section.suggestions_size(), 2);
  EXPECT_THAT(section.suggestions(0).evidence(),
              HasSubstr("; torch also named module_mode of self.drop.training against other "
                        "cache entries of `forward`"));
  EXPECT_THAT(section.suggestions(1).evidence(), ::testing::Not(HasSubstr("also named")));
}

// Numerics switches flipped between calls of a compiled module (a sandbox scene's reasons,
// verbatim): deterministic algorithms on, then off, then float64 as the default dtype. The second
// recompile names both states against the newest entry and only default_dtype against the first:
// it is filed under default_dtype, what no entry had, and the remedy names the call that sets each.
TEST(RecompilePassTest, GlobalStatesAreFiledOneByOneAndNameTheirSetters) {
  v1::SessionCapture capture = FrameCompiledOnce("forward");
  AddCompile(&capture, 0, 1, {"0/0: GLOBAL_STATE changed: deterministic_algorithms "});
  AddCompile(&capture, 0, 2,
             {"0/1: GLOBAL_STATE changed: deterministic_algorithms default_dtype ",
              "0/0: GLOBAL_STATE changed: default_dtype "});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 2);
  EXPECT_EQ(section.clusters(0).axis(), "deterministic_algorithms");
  EXPECT_EQ(section.clusters(1).axis(), "default_dtype");
  // One suggestion for the frame's states, each with its setter.
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(),
              HasSubstr("torch's global state `deterministic_algorithms` (set by "
                        "`torch.use_deterministic_algorithms`), `default_dtype` (set by "
                        "`torch.set_default_dtype`) changed between compiled calls"));
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("set them once at start-up"));
  // Every state torch named has its own cluster: none is left to say as "also named".
  for (const v1::Suggestion& s : section.suggestions())
    EXPECT_THAT(s.evidence(), ::testing::Not(HasSubstr("also named"))) << s.evidence();

  // A grad-mode flip beside them keeps its own note, as the expected recompile it is.
  v1::SessionCapture flip = FrameCompiledOnce("forward");
  AddCompile(&flip, 0, 1, {"0/0: GLOBAL_STATE changed: grad_mode "});
  AddCompile(&flip, 0, 2,
             {"0/1: GLOBAL_STATE changed: grad_mode num_threads ",
              "0/0: GLOBAL_STATE changed: num_threads "});
  const v1::RecompileSection flipped = RunPass(flip);
  ASSERT_EQ(flipped.suggestions_size(), 2);
  EXPECT_THAT(flipped.suggestions(0).text(), HasSubstr("(set by `torch.set_num_threads`)"));
  EXPECT_FALSE(flipped.suggestions(0).expected());
  EXPECT_THAT(flipped.suggestions(1).text(), HasSubstr("grad mode differs between calls"));
  EXPECT_TRUE(flipped.suggestions(1).expected());

  // One call that changes two states (use_deterministic_algorithms(True, warn_only=True)) is one
  // recompile, whose remedy names the one setter once.
  v1::SessionCapture both = FrameCompiledOnce("forward");
  AddCompile(&both, 0, 1,
             {"0/0: GLOBAL_STATE changed: deterministic_algorithms "
              "deterministic_algorithms_warn_only "});
  const v1::RecompileSection one = RunPass(both);
  ASSERT_EQ(one.clusters_size(), 1);
  EXPECT_EQ(one.clusters(0).axis(), "deterministic_algorithms, deterministic_algorithms_warn_only");
  ASSERT_EQ(one.suggestions_size(), 1);
  EXPECT_THAT(one.suggestions(0).text(),
              HasSubstr("`deterministic_algorithms, deterministic_algorithms_warn_only` (set by "
                        "`torch.use_deterministic_algorithms`) changed between compiled calls — "
                        "each setting"));
}

// A sandbox function fed a dict batch whose keys change, a dataclass config whose `use_bias` flips,
// then a fresh lambda on each of three calls (the reasons verbatim). Torch 2.6 matches the bool by
// identity and names no type: one flip reads as an identity change and is told both ways; the
// lambda, new on every call, recompiles each time and is told to be made once; the dict's length
// is not called a list's. An HF-style attention called with `attention_mask=None`, then with a mask
// (a sandbox scene), reads the same: `___check_obj_id(L['attention_mask'], <id of None>)`, so the
// flag reading names that case too.
TEST(RecompilePassTest, AnIdentityGuardIsAFlagOrAnObjectMadePerCall) {
  v1::SessionCapture capture = FrameCompiledOnce("head");
  AddCompile(&capture, 0, 1, {"0/0: len(L['batch']) == 2"});
  AddCompile(&capture, 0, 2,
             {"0/1: ___check_obj_id(L['cfg'].use_bias, 10519872)", "0/0: len(L['batch']) == 2"});
  for (uint32_t n = 3; n <= 5; ++n) {
    std::vector<std::string> reasons;
    for (uint32_t entry = n; entry-- > 2;)
      reasons.push_back(
          absl::StrCat("0/", entry, ": ___check_obj_id(L['act'], 14055279053", entry, ")"));
    reasons.push_back("0/1: ___check_obj_id(L['cfg'].use_bias, 10519872)");
    reasons.push_back("0/0: len(L['batch']) == 2");
    AddCompile(&capture, 0, n, reasons);
  }
  const v1::RecompileSection section = RunPass(capture);
  std::map<std::string, std::string> text;
  for (int i = 0; i < section.clusters_size(); ++i)
    text[section.clusters(i).axis()] = section.suggestions(i).text();
  ASSERT_EQ(text.size(), 3u);
  EXPECT_THAT(text["act"], HasSubstr("is a different object on each call — create it once"));
  EXPECT_THAT(text["cfg.use_bias"],
              AllOf(HasSubstr("if it is a flag (True, False and None are matched by identity)"),
                    HasSubstr("an optional argument that is None on some calls"),
                    HasSubstr("if it is an object made per call")));
  EXPECT_THAT(text["len(batch)"], HasSubstr("a list, tuple or dict whose length varies"));
}

TEST(RecompilePassTest, OneSizeRecompileUnderDynamicFalseIsAProblem) {
  v1::SessionCapture capture;
  SetDynamoConfig(AddCompile(&capture, 0, 0), R"({"automatic_dynamic_shapes": false})");
  AddCompile(&capture, 0, 1, {"0/0: tensor 'x' size mismatch at index 1. expected 7, actual 9"});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("`torch._dynamo.mark_dynamic(x, 1)`"));
  EXPECT_THAT(section.suggestions(0).evidence(), HasSubstr("automatic_dynamic_shapes=False"));
  EXPECT_FALSE(section.suggestions(0).expected());
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_FALSE(section.clusters(0).expected());
}

TEST(RecompilePassTest, NewestBulletExplainsWhenNoneNamesTheFirstEntry) {
  v1::SessionCapture capture;
  AddCompile(&capture, 0, 0);
  // Old torch: no compile ids in the bullets.
  AddCompile(&capture, 0, 1, {"L['lr'] == 0.01"});
  AddCompile(&capture, 0, 2, {"L['lr'] == 0.02", "L['lr'] == 0.01"});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_EQ(Word(section.clusters(0).category()), "value");
  EXPECT_EQ(section.clusters(0).count(), 2u);
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("torch.tensor(value)"));
  EXPECT_EQ(section.suggestions(0).evidence(),
            "value cluster on lr — 2 recompiles (guarded values 0.01, 0.02)");
}

TEST(RecompilePassTest, FramesAreOrderedByRecompiles) {
  v1::SessionCapture capture;
  for (uint32_t id : {0u, 1u}) {
    v1::Frame* frame = capture.add_frames();
    frame->set_id(id);
    frame->set_name(id == 0 ? "loss" : "forward");
  }
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, {"0/0: ___check_obj_id(fn, 1401)"});
  AddCompile(&capture, 1, 0);
  AddCompile(&capture, 1, 1, {"1/0: tensor 'x' stride mismatch at index 0. expected 1, actual 4"});
  AddCompile(&capture, 1, 2, {"1/0: tensor 'x' stride mismatch at index 0. expected 1, actual 8"});
  const v1::RecompileSection section = RunPass(capture);
  EXPECT_EQ(section.total(), 3u);
  EXPECT_EQ(section.frame().name(), "forward");
  ASSERT_EQ(section.frames_size(), 2);
  EXPECT_EQ(section.frames(1).name(), "loss");
  EXPECT_EQ(section.clusters(0).frame(), "forward");
  EXPECT_EQ(section.suggestions(0).evidence(),
            "stride cluster on x[0] in `forward` — 2 recompiles (values 1→4, 1→8)");
  EXPECT_THAT(section.suggestions(1).text(),
              HasSubstr("was another object than the one torch compiled for"));
}

TEST(RecompilePassTest, RestartedAttemptIsOneRecompile) {
  v1::SessionCapture capture;
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, {"0/0: L['n'] == 3"});
  v1::Compile* restart = AddCompile(&capture, 0, 1, {"0/0: L['n'] == 3"});
  restart->set_id("0/1_1");
  restart->set_attempt(1);
  EXPECT_EQ(RunPass(capture).total(), 1u);
}

// Frame 0, `forward` at /w/m.py:3, compiled once and then recompiled for a size mismatch.
v1::SessionCapture ForwardRecompiledOnce() {
  v1::SessionCapture capture;
  v1::Frame* frame = capture.add_frames();
  frame->set_name("forward");
  frame->set_file("/w/m.py");
  frame->set_line(3);
  capture.mutable_session()->set_project_root("/w");
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, {"0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3"});
  return capture;
}

TEST(RecompilePassTest, CacheLimitFromTorchsWarning) {
  v1::SessionCapture capture = ForwardRecompiledOnce();
  v1::Compile* failed = capture.mutable_compiles(1);
  failed->set_fail_reason(
      "torch._dynamo hit config.cache_size_limit (8)\n"
      "   function: 'forward' (/w/m.py:3)\n"
      "   last reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9\n");
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.cache_limit_hits_size(), 1);
  const v1::CacheLimitHit& hit = section.cache_limit_hits(0);
  EXPECT_EQ(hit.frame(), "forward");
  EXPECT_EQ(hit.limit(), "cache_size_limit");
  EXPECT_EQ(hit.value(), 8u);
  EXPECT_EQ(hit.location().file(), "m.py");
  EXPECT_EQ(hit.evidence(),
            "torch reported hitting cache_size_limit (8) in compile 0/1 fail_reason; last reason: "
            "0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9");
  // The limit is the most impactful fact, so its suggestion comes first.
  EXPECT_EQ(Word(section.suggestions(0).category()), "cache_limit");
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("torch._dynamo.config.cache_size_limit"));
}

// A limit message in an extra record counts, unless the record is one torch generates whole
// (code, trace events, graph dumps), where such text can only be a literal in generated code.
TEST(RecompilePassTest, CacheLimitFromAnExtraRecordButNotFromGeneratedCode) {
  const std::string warning =
      "torch._dynamo hit config.recompile_limit (8)\n   function: 'forward' (/w/m.py:3)\n";
  for (const auto& [kind, reported] :
       {std::pair{"artifact:dynamo_error", true}, std::pair{"str", true},
        std::pair{"inductor_output_code", false}, std::pair{"artifact:fx_graph_runnable", false},
        std::pair{"chromium_event", false}}) {
    v1::SessionCapture capture = ForwardRecompiledOnce();
    v1::Extra* extra = capture.add_extras();
    extra->set_kind(kind);
    extra->set_compile_id("0/0");
    extra->set_payload(absl::StrCat("log = \"\"\"", warning, "\"\"\"\n"));
    const v1::RecompileSection section = RunPass(capture);
    EXPECT_EQ(section.cache_limit_hits_size(), reported ? 1 : 0) << kind;
    if (reported && section.cache_limit_hits_size() == 1) {
      EXPECT_THAT(section.cache_limit_hits(0).evidence(),
                  HasSubstr(absl::StrCat("in a `", kind, "` record")));
    }
  }
}

TEST(RecompilePassTest, CacheLimitFromEntryCountAndConfig) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("step");
  for (uint32_t n = 0; n < 4; ++n) {
    v1::Compile* compile =
        AddCompile(&capture, 0, n,
                   n == 0 ? std::vector<std::string>{}
                          : std::vector<std::string>{"0/0: L['k'] == " + std::to_string(n)});
    // An importer may have expanded the config into a Struct already.
    auto& config =
        *(*compile->mutable_metrics()->mutable_fields())["dynamo_config"].mutable_struct_value();
    (*config.mutable_fields())["recompile_limit"].set_number_value(4);
  }
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.cache_limit_hits_size(), 1);
  EXPECT_EQ(section.cache_limit_hits(0).limit(), "recompile_limit");
  EXPECT_EQ(section.cache_limit_hits(0).value(), 4u);
  EXPECT_EQ(section.cache_limit_hits(0).evidence(),
            "`step` compiled 4 cache entries, reaching recompile_limit = 4 (dynamo_config); "
            "further guard failures run the frame eagerly (or raise RecompileLimitExceeded under "
            "fullgraph=True)");
}

// As torch writes it: dynamo_config a JSON string in each compile's metrics. The frame's latest
// compile with a readable config is the one that counts; an unreadable one is passed over.
TEST(RecompilePassTest, CacheLimitFromTheLatestReadableConfigString) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("step");
  const std::vector<std::string> configs = {
      R"({"recompile_limit": 8, "automatic_dynamic_shapes": true})",
      R"({"cache_size_limit": 3, "accumulated_cache_size_limit": 64})", "{not json", ""};
  for (uint32_t n = 0; n < configs.size(); ++n) {
    v1::Compile* compile =
        AddCompile(&capture, 0, n,
                   n == 0 ? std::vector<std::string>{}
                          : std::vector<std::string>{"0/0: L['k'] == " + std::to_string(n)});
    if (!configs[n].empty()) SetDynamoConfig(compile, configs[n]);
  }
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.cache_limit_hits_size(), 1);
  EXPECT_EQ(section.cache_limit_hits(0).limit(), "cache_size_limit");
  EXPECT_EQ(section.cache_limit_hits(0).value(), 3u);
  EXPECT_THAT(section.cache_limit_hits(0).evidence(),
              HasSubstr("reaching cache_size_limit = 3 (dynamo_config)"));
}

// A learning rate a scheduler changes each step, read by a compiled optimizer step. Under torch
// 2.6's `specialize_float = False` the one recompile makes it a graph input (a sandbox run of
// AdamW with StepLR recompiled once in 12 steps); where floats are specialised, or the value keeps
// recompiling, the remedy is the tensor, and specialize_float is suggested only where it is on.
TEST(RecompilePassTest, AFloatThatChangedOnceUnderUnspecializedFloatsIsExpected) {
  const auto section_for = [](const std::string& config, int recompiles) {
    v1::SessionCapture capture;
    capture.add_frames()->set_name("step");
    for (int n = 0; n <= recompiles; ++n) {
      v1::Compile* compile =
          AddCompile(&capture, 0, n,
                     n == 0 ? std::vector<std::string>{}
                            : std::vector<std::string>{absl::StrCat(
                                  "0/", n - 1, ": L['self'].param_groups[0]['lr'] == 0.00", n)});
      SetDynamoConfig(compile, config);
    }
    return RunPass(capture);
  };
  const v1::RecompileSection once = section_for(R"({"specialize_float": false})", 1);
  ASSERT_EQ(once.suggestions_size(), 1);
  EXPECT_EQ(once.suggestions(0).text(),
            "`self.param_groups[0]['lr']` (a float) changed once and torch made it a graph input "
            "(automatic dynamic; `specialize_float` is False in this run) — expected; nothing to "
            "change unless it keeps recompiling.");

  const v1::RecompileSection specialized = section_for(R"({"specialize_float": true})", 1);
  ASSERT_EQ(specialized.suggestions_size(), 1);
  EXPECT_THAT(specialized.suggestions(0).text(), HasSubstr("wrap it in a tensor"));
  EXPECT_THAT(specialized.suggestions(0).text(), HasSubstr("specialize_float = False"));

  const v1::RecompileSection again = section_for(R"({"specialize_float": false})", 3);
  ASSERT_EQ(again.suggestions_size(), 1);
  EXPECT_THAT(again.suggestions(0).text(), HasSubstr("wrap it in a tensor"));
  EXPECT_THAT(again.suggestions(0).text(), ::testing::Not(HasSubstr("specialize_float")));
}

// An int attribute a module bumps each call (a sandbox warm-up schedule, `self.step += 1`, then
// `scale = min(1.0, self.step / 4)`; its reasons verbatim): the first change makes it a SymInt,
// expected; the `min` then branches on the SymInt, and that guard is named with its line.
TEST(RecompilePassTest, AnIntThatWentDynamicThenABranchOnIt) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, {"0/0: L['self'].step == 0                                         "});
  AddCompile(&capture, 0, 2,
             {"0/1: ((1 + L['self'].step) / 4) <= 1.0  # scale = min(1.0, self.step / 4)  # "
              "nt/project/counter.py:13 in forward (_dynamo/utils.py:2586 in run_node)",
              "0/0: L['self'].step == 0                                         "});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 2);
  EXPECT_EQ(Word(section.clusters(0).category()), "value");
  EXPECT_EQ(Word(section.clusters(1).category()), "symbolic_shape");
  EXPECT_EQ(section.clusters(1).variable(), "self.step");
  ASSERT_EQ(section.suggestions_size(), 2);
  EXPECT_EQ(section.suggestions(0).text(),
            "a guard on the dynamic value `self.step` failed (`((1 + self.step) / 4) <= 1.0`), "
            "from `scale = min(1.0, self.step / 4)`: the code branches on it (a `min` / `max`, "
            "an `if` or a comparison), and each outcome is a graph of its own — compute it with "
            "tensor ops (`torch.clamp`, `torch.where`) on a tensor value, or move the branch out "
            "of the compiled function.");
  EXPECT_THAT(section.suggestions(1).text(),
              HasSubstr("`self.step` (an int) changed once and torch made it a dynamic int"));
  // Compiled with dynamic=False, nothing goes dynamic: the tensor remedy.
  v1::SessionCapture static_run;
  static_run.add_frames()->set_name("forward");
  AddCompile(&static_run, 0, 0);
  SetDynamoConfig(AddCompile(&static_run, 0, 1, {"0/0: L['self'].step == 0"}),
                  R"({"automatic_dynamic_shapes": false})");
  const v1::RecompileSection static_section = RunPass(static_run);
  ASSERT_EQ(static_section.suggestions_size(), 1);
  EXPECT_THAT(static_section.suggestions(0).text(), HasSubstr("wrap it in a tensor"));
}

// The same on the real log: fixtures/torch_trace/torch-2.6/lr_schedule, AdamW's step under StepLR
// for 12 steps, one recompile on the lr guard.
TEST(RecompilePassTest, TheLrScheduleScenesOneRecompileIsExpected) {
  const v1::RecompileSection section =
      RunPass(::cl::testing::ImportFixtureLog("torch_trace/torch-2.6/lr_schedule/trace.log"));
  EXPECT_EQ(section.total(), 1u);
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_EQ(Word(section.clusters(0).category()), "value");
  EXPECT_EQ(section.clusters(0).variable(), "self.param_groups[0]['lr']");
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(),
              HasSubstr("(a float) changed once and torch made it a graph input"));
  EXPECT_TRUE(section.suggestions(0).expected());
  EXPECT_TRUE(section.clusters(0).expected());
  EXPECT_EQ(section.cache_limit_hits_size(), 0);
}

// A dispatch-key change where only an Autocast key differs is autocast switched on around some
// calls (a sandbox CNN called once under `torch.autocast("cpu", bfloat16)`, its reason verbatim);
// other keys (a Python mode's) keep the created-under-a-mode remedy.
TEST(RecompilePassTest, AnAutocastKeyIsAutocastNotAMode) {
  const auto remedy_for = [](const std::string& actual) {
    v1::SessionCapture capture;
    capture.add_frames()->set_name("forward");
    AddCompile(&capture, 0, 0);
    AddCompile(&capture, 0, 1,
               {"0/0: tensor 'L['x']' dispatch key set mismatch. expected DispatchKeySet(CPU, "
                "BackendSelect, ADInplaceOrView, AutogradCPU), actual " +
                actual});
    const v1::RecompileSection section = RunPass(capture);
    EXPECT_EQ(section.suggestions_size(), 1);
    return section.suggestions_size() == 1 ? section.suggestions(0).text() : "";
  };
  EXPECT_EQ(remedy_for("DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU, "
                       "AutocastCPU)"),
            "`torch.autocast` is on around some calls and off around others (`AutocastCPU` in "
            "`x`'s dispatch keys) — each autocast state is a graph of its own: enter the same "
            "autocast around every call, or compile separate callables for the autocast and "
            "full-precision paths.");
  EXPECT_THAT(remedy_for("DispatchKeySet(CPU, Python, BackendSelect, ADInplaceOrView, "
                         "AutogradCPU, PythonTLSSnapshot)"),
              HasSubstr("was created under a different mode"));
}

// A recompile torch failed to compile (a sandbox scene: a Linear(32, 16) head called with 48
// features; fake-tensor propagation raised TorchRuntimeError) is no expected automatic-dynamic
// change: the remedy sends the reader to the failure. A restart's failed later attempt counts.
TEST(RecompilePassTest, ARecompileThatFailedIsNotExpected) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("head");
  AddCompile(&capture, 0, 0);
  v1::Compile* failed = AddCompile(
      &capture, 0, 1, {"0/0: tensor 'L['x']' size mismatch at index 1. expected 32, actual 48"});
  failed->set_status(v1::Compile::FAILED);
  failed->set_fail_type("TorchRuntimeError");
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_FALSE(section.clusters(0).expected());
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_FALSE(section.suggestions(0).expected());
  EXPECT_EQ(section.suggestions(0).text(),
            "`x[1]` changed (32→48) and torch's recompile for it failed (TorchRuntimeError; see "
            "Failures), so those calls did not run compiled: read the failure first — a new value "
            "the code cannot take (a shape or type bug in the caller) is no recompile to tune.");

  // Without the failure, the same change is automatic dynamic's, expected.
  failed->set_status(v1::Compile::OK);
  failed->clear_fail_type();
  EXPECT_TRUE(RunPass(capture).clusters(0).expected());
}

// Torch's wrapper frame (external_utils.py's `inner`) recompiling several times is named and
// placed once, at its first compile's call (tlparse's multi_rank_runtime logs: `inner`, identity
// of fn, three recompiles).
TEST(RecompilePassTest, ATorchWrapperFrameIsNamedOnceWhateverItsCompiles) {
  v1::SessionCapture capture;
  v1::Frame* frame = capture.add_frames();
  frame->set_name("inner");
  frame->set_file("/usr/lib/python3/dist-packages/torch/_dynamo/external_utils.py");
  frame->set_line(43);
  for (uint32_t n = 0; n < 4; ++n) {
    v1::Compile* c =
        AddCompile(&capture, 0, n,
                   n == 0 ? std::vector<std::string>{}
                          : std::vector<std::string>{absl::StrCat(
                                "0/", n - 1, ": ___check_obj_id(fn, ", n, "39696444471168)")});
    v1::StackFrame* call = c->add_stack();
    call->set_file("/w/train.py");
    call->set_line(20 + n);
    call->set_name("main");
  }
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.frames_size(), 1);
  EXPECT_EQ(section.frames(0).name(), "inner (torch's wrapper of a compiled module)");
  EXPECT_EQ(section.frames(0).location().file(), "/w/train.py");
  EXPECT_EQ(section.frames(0).location().line(), 20u);
}

// The same on the real log, which torch wrote from a source checkout (/home/.../pytorch/torch/,
// not site-packages): torch's own files there are not the user's either, and the wrapper is
// placed at the user's call in test2.py, not at external_utils.py:66.
TEST(RecompilePassTest, ATorchCheckoutsFilesAreNotTheUsers) {
  const v1::RecompileSection section = RunPass(
      ::cl::testing::ImportFixtureLog("torch_trace/tlparse-corpus/tlparse/multi_rank_runtime/"
                                      "dedicated_log_torch_trace_rank_0.log"));
  ASSERT_EQ(section.frames_size(), 1);
  EXPECT_EQ(section.frames(0).name(), "inner (torch's wrapper of a compiled module)");
  EXPECT_EQ(section.frames(0).location().file(), "/home/skarjala/pytorch/test2.py");
  EXPECT_EQ(section.frames(0).location().line(), 164u);
}

// A dropout schedule written into a module's attribute (a sandbox scene: `layer.drop.p = 0.1 *
// (step + 1)` before each step, torch 2.6's guards verbatim) recompiles on every value although
// specialize_float is off: the remedy says torch guards it by value, not "wrap it in a tensor"
// (F.dropout takes a Python float) nor "expected".
TEST(RecompilePassTest, AFloatAttributeUnderASchedule) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  AddCompile(&capture, 0, 0);
  const std::string p = "L['self']._modules['layers']._modules['0']._modules['drop'].p == ";
  AddCompile(&capture, 0, 1, {"0/0: " + p + "0.1"});
  AddCompile(&capture, 0, 2, {"0/1: " + p + "0.2", "0/0: " + p + "0.1"});
  AddCompile(&capture, 0, 3,
             {"0/2: " + p + "0.30000000000000004", "0/1: " + p + "0.2", "0/0: " + p + "0.1"});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_EQ(section.clusters(0).variable(), "self.layers[0].drop.p");
  EXPECT_FALSE(section.clusters(0).expected());
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(),
              HasSubstr("(a float attribute) changes between calls and torch guards it by value"));
  EXPECT_THAT(section.suggestions(0).text(), ::testing::Not(HasSubstr("torch.tensor(value)")));
}

// A KV cache that starts empty and grows (a sandbox decoder layer: prefill, then decode steps)
// recompiles once on its stride, 16→144, though it is contiguous throughout: the remedy says both
// readings. Repeated stride changes are a view problem (RecompilePassTest's stride clusters).
TEST(RecompilePassTest, AStrideThatChangedOnceMayBeAGrowingCache) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1,
             {"0/0: tensor 'L['k_cache']' stride mismatch at index 1. expected 16, actual 144"});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(),
              HasSubstr("`k_cache`'s stride on dim 1 changed once (16→144)"));
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("call `.contiguous()`"));
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("a later dim grew (a KV cache)"));
}

// Two modules' `forward` in one file: two frames of one name, told apart by their first line.
v1::SessionCapture TwoForwards() {
  v1::SessionCapture capture;
  capture.mutable_session()->set_project_root("/w");
  for (const uint32_t line : {3u, 30u}) {
    v1::Frame* frame = capture.add_frames();
    frame->set_id(capture.frames_size() - 1);
    frame->set_name("forward");
    frame->set_file("/w/m.py");
    frame->set_line(line);
  }
  return capture;
}

TEST(RecompilePassTest, CacheLimitMessageGoesToTheFrameItsLineNames) {
  v1::SessionCapture capture = TwoForwards();
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 1, 0);
  // Logged outside any compile (no frame id): only the message's line tells the frames apart.
  v1::Extra* extra = capture.add_extras();
  extra->set_kind("str");
  extra->set_payload(
      "torch._dynamo hit config.recompile_limit (8)\n   function: 'forward' (/w/m.py:30)\n");
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.cache_limit_hits_size(), 1);
  EXPECT_EQ(section.cache_limit_hits(0).location().line(), 30u);
}

TEST(RecompilePassTest, CacheLimitMessageGoesToItsCompilesFrame) {
  v1::SessionCapture capture = TwoForwards();
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 1, 0);
  // The oldest form names the function only; the compile it was logged in is frame 1's.
  AddCompile(&capture, 1, 1)
      ->set_fail_reason("torchdynamo hit recompilation cache limit (8) for function 'forward'");
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.cache_limit_hits_size(), 1);
  EXPECT_EQ(section.cache_limit_hits(0).location().line(), 30u);
}

TEST(RecompilePassTest, SameNamedFramesHitTheirLimitsSeparately) {
  v1::SessionCapture capture = TwoForwards();
  for (uint32_t frame = 0; frame < 2; ++frame) {
    for (uint32_t n = 0; n < 2; ++n) {
      SetDynamoConfig(AddCompile(&capture, frame, n), R"({"recompile_limit": 2})");
    }
  }
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.cache_limit_hits_size(), 2);
  EXPECT_EQ(section.cache_limit_hits(0).location().line(), 3u);
  EXPECT_EQ(section.cache_limit_hits(1).location().line(), 30u);
  for (const v1::CacheLimitHit& hit : section.cache_limit_hits()) {
    EXPECT_EQ(hit.frame(), "forward");
    EXPECT_EQ(hit.evidence(),
              "`forward` compiled 2 cache entries, reaching recompile_limit = 2 (dynamo_config); "
              "further guard failures run the frame eagerly (or raise RecompileLimitExceeded under "
              "fullgraph=True)");
  }
}

TEST(RecompilePassTest, NoCompilesIsSkipped) {
  v1::AnalysisReport report;
  PassOptions options;
  v1::SessionCapture empty;
  PassInput in{empty, nullptr, options};
  ASSERT_THAT(RecompilePass().Run(in, &report), IsOk());
  EXPECT_EQ(report.recompile().status(), v1::SKIPPED);
  EXPECT_EQ(report.recompile().reason(), "no compiles in the capture");
}

TEST(RecompilePassTest, CompilesWithoutRecompilesAreOk) {
  v1::SessionCapture capture;
  AddCompile(&capture, 0, 0);
  const v1::RecompileSection section = RunPass(capture);
  EXPECT_EQ(section.status(), v1::OK);
  EXPECT_EQ(section.total(), 0u);
  EXPECT_EQ(section.clusters_size(), 0);
}

TEST(RecompilePassTest, GarbageReasonsAreOtherWithTheRawTextKept) {
  v1::SessionCapture capture;
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, {"0/0: \x01\x02 definitely not torch", ""});
  v1::AnalysisReport report;
  const v1::RecompileSection section = RunPass(capture, &report);
  EXPECT_EQ(section.total(), 1u);
  ASSERT_EQ(section.reasons_size(), 2);
  EXPECT_EQ(Word(section.reasons(0).category()), "other");
  EXPECT_EQ(section.reasons(0).raw(), "0/0: \x01\x02 definitely not torch");
  EXPECT_EQ(section.reasons(0).entry_id(), "0/0");
  EXPECT_EQ(Word(section.reasons(1).category()), "unknown");
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_EQ(Word(section.clusters(0).category()), "other");
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("TORCH_LOGS=recompiles_verbose"));
  ASSERT_EQ(report.diagnostics_size(), 1);
  EXPECT_THAT(report.diagnostics(0).message(), HasSubstr("1 recompile reason not recognised"));
}

TEST(RecompilePassTest, LongUnrecognisedTextIsCutOnACharacterBoundary) {
  v1::SessionCapture capture;
  AddCompile(&capture, 0, 0);
  // Byte 80 of the check falls inside the first two-byte "é": the cut must back off before it.
  std::string reason = "0/0: " + std::string(79, 'a');
  for (int i = 0; i < 100; ++i) reason += "é";
  AddCompile(&capture, 0, 1, {reason});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("`" + std::string(79, 'a') + "…`"));
}

TEST(RecompilePassTest, CancelledFlagStopsThePass) {
  v1::SessionCapture capture;
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, {"0/0: L['n'] == 3"});
  EXPECT_THAT(::cl::testing::RunPassCancelled(RecompilePass(), capture),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("cancelled")));
}

TEST(RecompilePassTest, IsRegisteredForTheRecompileSection) {
  const Pass* pass = FindPass("recompile");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->Section(), "recompile");
}

// A recorded scene's log (tests/fixtures/torch_trace/torch-2.6/<folder>/trace.log).
v1::SessionCapture ImportScene(const std::string& folder) {
  return testing::ImportFixtureLog(absl::StrCat("torch_trace/torch-2.6/", folder, "/trace.log"));
}

// The section's clusters by axis ("x[1]", "len(fn)").
std::map<std::string, const v1::RecompileCluster*> ClustersByAxis(
    const v1::RecompileSection& section) {
  std::map<std::string, const v1::RecompileCluster*> by_axis;
  for (const v1::RecompileCluster& c : section.clusters()) by_axis[c.axis()] = &c;
  return by_axis;
}

// Each cluster's suggestion text by the cluster's axis, read off the suggestion's evidence ("size
// cluster on x[1] — ...").
std::map<std::string, std::string> AdviceByAxis(const v1::RecompileSection& section) {
  std::map<std::string, std::string> advice;
  for (const v1::Suggestion& s : section.suggestions()) {
    for (const v1::RecompileCluster& c : section.clusters()) {
      if (absl::StrContains(s.evidence(), absl::StrCat("on ", c.axis(), " ")))
        advice[c.axis()] = s.text();
    }
  }
  return advice;
}

// A resume function's input (`___stack1`: a BERT-style loss after the graph break at
// `logits[mask]`, whose row count changed) has no name in the user's code; the advice says what
// it is.
TEST(RecompilePassTest, AResumeFunctionsStackValueIsSaidWhatItIs) {
  v1::SessionCapture capture;
  v1::Frame* frame = capture.add_frames();
  frame->set_name("torch_dynamo_resume_in_forward_at_9");
  frame->set_file("/w/mlm.py");
  frame->set_line(9);
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1,
             {"0/0: tensor 'L['___stack1']' size mismatch at index 0. expected 12, actual 11"});
  EXPECT_THAT(
      AdviceByAxis(RunPass(capture))["___stack1[0]"],
      ::testing::StartsWith("`___stack1` (a value the graph break carried into the code after it) "
                            "dim 0"));
}

// torch 2.6 under dynamic=True on `if x.shape[0] > 8:` called with batches 4, 6, 16, 32, 2 (a
// sandbox scene, the reason verbatim): one recompile for the other side of the branch, which the
// guard's comment names. Expected once; not "mark_unbacked", which would make the branch fail.
TEST(RecompilePassTest, ABranchOnADynamicSizeIsOneGraphPerSide) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1,
             {"0/0: L['x'].size()[0] <= 8  # if x.shape[0] > 8:  # nt/project/thresh.py:7 in "
              "forward (_dynamo/variables/tensor.py:1201 in evaluate_expr)"});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_TRUE(section.clusters(0).expected());
  const std::string advice = AdviceByAxis(section)["x[0]"];
  EXPECT_THAT(advice, HasSubstr("from `if x.shape[0] > 8:`: the code branches on the size"));
  EXPECT_THAT(advice, ::testing::Not(HasSubstr("use `torch._dynamo.mark_unbacked")));
}

// torch 2.6 on a DCGAN step (a sandbox scene, the reason verbatim): the compiled discriminator gets
// a detached batch in its own step and the generator's output, which needs grad, in the
// generator's. One graph each way, expected once; not "separate training from inference".
TEST(RecompilePassTest, AnInputThatNeedsGradOnlySometimesIsOneGraphEachWay) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("inner");
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1,
             {"0/0: tensor 'L['args'][0]' requires_grad mismatch. expected requires_grad=0"});
  v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_TRUE(section.clusters(0).expected());
  const std::string advice = AdviceByAxis(section)["args[0]"];
  EXPECT_THAT(advice, HasSubstr("a GAN's discriminator fed a detached batch"));
  EXPECT_THAT(advice, ::testing::Not(HasSubstr("training and inference")));
  // Flipping on more than one entry is not the one expected pair of graphs.
  AddCompile(&capture, 0, 2,
             {"0/1: tensor 'L['args'][0]' requires_grad mismatch. expected requires_grad=1",
              "0/0: tensor 'L['args'][0]' requires_grad mismatch. expected requires_grad=0"});
  section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_FALSE(section.clusters(0).expected());
}

// torch 2.6 on a Whisper-style encoder (conv1d frontend, positions sliced to the length; a sandbox
// scene, the reasons verbatim): 200 frames, 160 (made dynamic), then 240 failed a guard whose
// comment names only torch's own frame, the repro writer TORCH_TRACE runs. Not "the code
// branches on the size" from a line that is torch's.
TEST(RecompilePassTest, AGuardTorchsOwnCodeAddedIsNotTheUsersBranch) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1,
             {"0/0: tensor 'L['mel']' size mismatch at index 2. expected 200, actual 160"});
  AddCompile(&capture, 0, 2,
             {"0/1: (4 + 4*(((-1) + L['mel'].size()[2]) // 2)) == 320  # "
              "(_dynamo/debug_utils.py:661 in tensor)",
              "0/0: tensor 'L['mel']' size mismatch at index 2. expected 200, actual 240"});
  const v1::RecompileSection section = RunPass(capture);
  std::string advice;
  for (const v1::Suggestion& s : section.suggestions()) {
    if (absl::StrContains(s.evidence(), "symbolic_shape")) advice = s.text();
  }
  EXPECT_THAT(advice, HasSubstr("added by torch's own code (`_dynamo/debug_utils.py:661 in "
                                "tensor`, which writes the `fx_graph_runnable` repro"));
  EXPECT_THAT(advice, ::testing::Not(HasSubstr("the code branches on the size")));
  for (const v1::RecompileCluster& c : section.clusters()) {
    if (c.category() == v1::RecompileCategory::SYMBOLIC_SHAPE) {
      EXPECT_FALSE(c.expected());
    }
  }
}

// torch 2.6 on a compiled step that appends its loss to a global list (a sandbox scene, the
// reasons verbatim less their padding): each call's list is one longer, every call recompiles.
// The advice is to keep the bookkeeping out, not "fine for a few lengths".
TEST(RecompilePassTest, AListTheCodeAppendsToRecompilesEveryCall) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("step");
  std::vector<std::string> entries = {"0/0: not G['history']"};
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, entries);
  for (int n = 1; n <= 4; ++n) {
    entries.insert(entries.begin(), absl::StrCat("0/", n, ": len(G['history']) == ", n));
    AddCompile(&capture, 0, n + 1, entries);
  }
  const v1::RecompileSection section = RunPass(capture);
  const std::string advice = AdviceByAxis(section)["len(G['history'])"];
  EXPECT_THAT(advice, HasSubstr("grows by one between calls"));
  EXPECT_THAT(advice, HasSubstr("append what it returns, after the call"));
  EXPECT_THAT(advice, ::testing::Not(HasSubstr("fine for a few lengths")));
}

// Torch guards an empty list as `not G['msgs']` (its length guard at 0): a sandbox scene whose
// forward appends a debug message to a global list, called three times (the reasons verbatim less
// their padding). From empty, two lengths of the code's own state are enough to say it grows; two
// lengths of an argument the caller passes are not.
TEST(RecompilePassTest, AGlobalListGrowingFromEmptyIsBookkeeping) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("torch_dynamo_resume_in_forward_at_10");
  AddCompile(&capture, 0, 0);
  AddCompile(&capture, 0, 1, {"0/0: not G['msgs']"});
  AddCompile(&capture, 0, 2, {"0/1: len(G['msgs']) == 1", "0/0: not G['msgs']"});
  v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_EQ(section.clusters(0).axis(), "len(G['msgs'])");
  EXPECT_THAT(section.clusters(0).guarded_values(), ElementsAre("0", "1"));
  EXPECT_THAT(AdviceByAxis(section)["len(G['msgs'])"], HasSubstr("grows by one between calls"));

  v1::SessionCapture passed;
  passed.add_frames()->set_name("forward");
  AddCompile(&passed, 0, 0);
  AddCompile(&passed, 0, 1, {"0/0: not L['extras']"});
  AddCompile(&passed, 0, 2, {"0/1: len(L['extras']) == 1", "0/0: not L['extras']"});
  section = RunPass(passed);
  EXPECT_THAT(AdviceByAxis(section)["len(extras)"], HasSubstr("fine for a few lengths"));
}

// fixtures/torch_trace/torch-2.6/gpt_recompiles (scenes/gpt.py): a nanoGPT called with idx (2,16),
// (4,16), (4,32), then with a submodule swapped for a subclass. Each recompile is what torch said
// changed: batch, then sequence length, then the module's type, read as the user wrote it.
TEST(RecompilePassTest, ARealGptsRecompilesAreEachTheirOwnCause) {
  const v1::RecompileSection section = RunPass(ImportScene("gpt_recompiles"));
  EXPECT_EQ(section.total(), 3u);
  ASSERT_EQ(section.clusters_size(), 3);
  std::vector<std::string> axes;
  for (const v1::RecompileCluster& c : section.clusters()) {
    axes.push_back(c.axis());
    EXPECT_EQ(c.count(), 1u) << c.axis();
  }
  EXPECT_THAT(axes,
              ::testing::UnorderedElementsAre("idx[0]", "idx[1]", "self.transformer.h[0].mlp"));
  ASSERT_GE(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(), HasSubstr("`torch._dynamo.mark_dynamic(idx, 0)` and "
                                                       "`torch._dynamo.mark_dynamic(idx, 1)`"));
}

// fixtures/torch_trace/torch-2.6/shape_habits (scenes/shape_habits.py): a Python int that drives
// `range()` is specialised by that line after automatic dynamic made it a SymInt (torch's guard
// names it), so "wrap it in a tensor" or "expected" would be wrong; a last batch of one row is no
// dynamic graph (sizes 0 and 1 are specialised), so it is not "made dynamic" either; and the frame
// of a compiled nn.Sequential, torch's wrapper `inner`, is placed at the user's call.
TEST(RecompilePassTest, ShapeHabitsOfRealInferenceCode) {
  const v1::RecompileSection section = RunPass(ImportScene("shape_habits"));
  EXPECT_EQ(section.total(), 4u);
  const std::map<std::string, const v1::RecompileCluster*> by_axis = ClustersByAxis(section);
  ASSERT_THAT(by_axis, ::testing::SizeIs(3));
  for (const auto& [axis, c] : by_axis) EXPECT_FALSE(c->expected()) << axis;
  ASSERT_TRUE(by_axis.contains("args[0][0]"));
  const v1::RecompileCluster& batch = *by_axis.at("args[0][0]");
  EXPECT_THAT(Transitions(batch), ElementsAre("32→1"));
  EXPECT_EQ(batch.frame(), "inner (torch's wrapper of a compiled module)");
  EXPECT_THAT(batch.location().file(), HasSubstr("shape_habits.py"));
  EXPECT_EQ(batch.location().line(), 47u);
  for (const v1::Suggestion& s : section.suggestions()) EXPECT_FALSE(s.expected()) << s.text();
  std::map<std::string, std::string> advice = AdviceByAxis(section);
  EXPECT_THAT(advice["steps"], HasSubstr("is specialised by `for t in range(steps):`"));
  EXPECT_THAT(advice["steps"], ::testing::Not(HasSubstr("wrap it in a tensor")));
  EXPECT_THAT(advice["args[0][0]"], HasSubstr("torch specialises sizes 0 and 1"));
  EXPECT_THAT(advice["args[0][0]"], ::testing::Not(HasSubstr("made it dynamic")));
  EXPECT_THAT(advice["x[1]"], HasSubstr("channels_last"));
}

// fixtures/torch_trace/torch-2.6/module_habits (scenes/module_habits.py): two nn.Sequential
// modules compiled on their own both compile torch's wrapper `inner`, so the second is a
// recompile of it on `len(L['fn'])`: expected once per module, not "give the list one length";
// a feature pyramid's list of 3, 4 and 2 levels says each length is a graph of its own, fine
// for a few.
TEST(RecompilePassTest, ModuleHabitsOfModelsBuiltFromTorchsModules) {
  const v1::RecompileSection section = RunPass(ImportScene("module_habits"));
  const std::map<std::string, const v1::RecompileCluster*> by_axis = ClustersByAxis(section);
  ASSERT_TRUE(by_axis.contains("len(fn)"));
  EXPECT_TRUE(by_axis.at("len(fn)")->expected());
  EXPECT_EQ(by_axis.at("len(fn)")->frame(), "inner (torch's wrapper of a compiled module)");
  ASSERT_TRUE(by_axis.contains("len(feats)"));
  EXPECT_FALSE(by_axis.at("len(feats)")->expected());
  std::map<std::string, std::string> advice = AdviceByAxis(section);
  EXPECT_THAT(advice["len(fn)"], HasSubstr("expected once per module"));
  EXPECT_THAT(advice["len(fn)"], ::testing::Not(HasSubstr("give it one length")));
  EXPECT_THAT(advice["len(feats)"], HasSubstr("fine for a few lengths"));
}

// fixtures/torch_trace/torch-2.6/training_habits: a model served under torch.inference_mode()
// and then evaluated under no_grad recompiles on its input's dispatch keys (AutogradCPU comes
// back): inference mode, not a device change ("move inputs to one device" was the remedy).
TEST(RecompilePassTest, InferenceModeThenNoGradIsNotADeviceChange) {
  const v1::RecompileSection section = RunPass(ImportScene("training_habits"));
  const std::map<std::string, const v1::RecompileCluster*> by_axis = ClustersByAxis(section);
  ASSERT_TRUE(by_axis.contains("x"));
  EXPECT_EQ(by_axis.at("x")->category(), v1::RecompileCategory::GLOBAL_STATE);
  bool said = false;
  for (const v1::Suggestion& s : section.suggestions()) {
    EXPECT_THAT(s.text(), ::testing::Not(HasSubstr("different device")));
    said = said || absl::StrContains(s.text(), "was seen inside `torch.inference_mode()`");
  }
  EXPECT_TRUE(said);
}

// fixtures/torch_trace/torch-2.6/python_state (scenes/python_state.py): a causal-mask cache keyed
// by the sequence length specialises it (torch's symbolic_shape_specialization names the lookup),
// so the remedy is that line, not mark_dynamic (which would fail there); a Python int counter on
// the module recompiles once and becomes a SymInt: expected.
TEST(RecompilePassTest, ASizeTheCodeLooksUpByIsSpecialisedByThatLine) {
  const v1::RecompileSection section = RunPass(ImportScene("python_state"));
  const std::map<std::string, const v1::RecompileCluster*> by_axis = ClustersByAxis(section);
  ASSERT_TRUE(by_axis.contains("x[1]"));
  EXPECT_FALSE(by_axis.at("x[1]")->expected());
  ASSERT_TRUE(by_axis.contains("self.step"));
  EXPECT_TRUE(by_axis.at("self.step")->expected());
  const std::string size_advice = AdviceByAxis(section)["x[1]"];
  EXPECT_THAT(size_advice,
              HasSubstr("`x` dim 1 is specialised by the code at /mnt/project/python_state.py:27"));
  EXPECT_THAT(size_advice, ::testing::Not(HasSubstr("mark it dynamic to stop")));
}

// torch 2.6 on a Mamba-style recurrence written as `for t in range(x.shape[1]):` (a sandbox scene:
// 64 steps, then 96; the reason and the specialization as logged): the loop is unrolled, so the
// advice is about the loop, not a size looked up in a dict.
TEST(RecompilePassTest, ASizeThatIsAPythonLoopsLengthIsUnrolled) {
  v1::SessionCapture capture;
  v1::Frame* frame = capture.add_frames();
  frame->set_name("forward");
  frame->set_file("/w/scan.py");
  frame->set_line(7);
  v1::SourceFile* source = capture.add_sources();
  source->set_path("/w/scan.py");
  std::string text;
  for (int line = 1; line < 11; ++line) absl::StrAppend(&text, "\n");
  absl::StrAppend(&text, "        for t in range(x.shape[1]):\n");
  source->set_text(text);
  AddCompile(&capture, 0, 0);
  v1::Compile* recompile = AddCompile(
      &capture, 0, 1, {"0/0: tensor 'L['x']' size mismatch at index 1. expected 64, actual 96"});
  v1::Specialization* s = recompile->add_specializations();
  s->set_symbol("s0");
  s->add_sources("L['x'].size()[1]");
  s->set_value("96");
  s->set_reason("range_refined_to_singleton");
  v1::StackFrame* user = s->add_user_stack();
  user->set_file("/w/scan.py");
  user->set_line(11);
  user->set_name("forward");
  const std::string advice = AdviceByAxis(RunPass(capture))["x[1]"];
  EXPECT_THAT(advice, HasSubstr("is the length of a Python loop at /w/scan.py:11 (`for t in "
                                "range(x.shape[1]):`): Dynamo unrolls the loop"));
  EXPECT_THAT(advice, ::testing::Not(HasSubstr("causal mask")));
}

// fixtures/torch_trace/torch-2.6/greedy_decode (scenes/greedy_decode.py): the model's forward sees
// the prompt (5 tokens), then one token a step. Size 1 past the batch dim is the decode graph,
// expected once; "a last batch of one row, drop_last" was the advice. The batch dim keeps it
// (shape_habits).
TEST(RecompilePassTest, PrefillThenDecodeIsExpected) {
  const v1::RecompileSection section = RunPass(ImportScene("greedy_decode"));
  const std::map<std::string, const v1::RecompileCluster*> by_axis = ClustersByAxis(section);
  ASSERT_TRUE(by_axis.contains("ids[1]"));
  EXPECT_TRUE(by_axis.at("ids[1]")->expected());
  EXPECT_THAT(Transitions(*by_axis.at("ids[1]")), ElementsAre("5→1"));
  for (const v1::Suggestion& s : section.suggestions())
    EXPECT_THAT(s.text(), ::testing::Not(HasSubstr("drop_last")));
  EXPECT_THAT(AdviceByAxis(section)["ids[1]"],
              HasSubstr("a decode step of one token after the prompt's prefill"));
}

// fixtures/torch_trace/torch-2.6/config_values (scenes/config_values.py): a string in a global
// config dict cannot be "wrapped in a tensor"; a float under specialize_float=True is guarded by
// value because the user turned it on, so "set specialize_float = False" alone is no remedy; a
// recompile whose compile failed says what the value was even where the guard printed only it.
TEST(RecompilePassTest, ConfigValuesAStringAFloatAndAFailedRecompile) {
  const v1::RecompileSection section = RunPass(ImportScene("config_values"));
  std::map<std::string, std::string> by_frame;  // the `scale` clusters' advice, by frame
  for (const v1::Suggestion& s : section.suggestions()) {
    if (absl::StrContains(s.evidence(), "on scale in `level`")) by_frame["level"] = s.text();
    if (absl::StrContains(s.evidence(), "on scale in `level_fixed`"))
      by_frame["level_fixed"] = s.text();
  }
  EXPECT_THAT(by_frame["level"],
              ::testing::StartsWith("`scale` changed (from 0.5) and torch's recompile for "
                                    "it failed (AssertionError; see Failures)"));
  EXPECT_THAT(by_frame["level_fixed"],
              HasSubstr("is guarded by value because `specialize_float` is True in this run"));
  const std::string act = AdviceByAxis(section)["G['CONFIG']['act']"];
  EXPECT_THAT(act, HasSubstr("(a string) picks what the code does"));
  EXPECT_THAT(act, ::testing::Not(HasSubstr("torch.tensor(value)")));
}

// fixtures/torch_trace/torch-2.6/kv_cache_dtype (scenes/kvcache.py): a gpt-fast decode step whose
// model and KV cache are converted to bf16 on purpose. The remedy leads with that being expected.
TEST(RecompilePassTest, ADeliberateDtypeChangeIsExpectedFirst) {
  const v1::RecompileSection section = RunPass(ImportScene("kv_cache_dtype"));
  ASSERT_EQ(section.clusters_size(), 1);
  EXPECT_EQ(section.clusters(0).axis(), "model.layers[0].attention.kv_cache.k_cache");
  EXPECT_THAT(Transitions(section.clusters(0)), ElementsAre("Float→BFloat16"));
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(),
              HasSubstr("): if the new dtype is intended, this recompile is expected once per "
                        "dtype; otherwise cast it"));
}

// fixtures/torch_trace/torch-2.6/topk_cache_limit (scenes/topk.py): torch.topk with a Python int
// k under cache_size_limit = 3, once with fullgraph=True (k = 5, 10, 20 each raise
// RecompileLimitExceeded) and once without (k = 5 is refused, then the frame runs eagerly).
TEST(RecompilePassTest, ACacheLimitSaysWhatTorchCompiledRefusedAndDidNext) {
  const v1::RecompileSection section = RunPass(ImportScene("topk_cache_limit"));
  ASSERT_EQ(section.cache_limit_hits_size(), 2);
  std::map<std::string, std::string> evidence;
  for (const v1::CacheLimitHit& hit : section.cache_limit_hits()) {
    EXPECT_EQ(hit.limit(), "cache_size_limit");
    EXPECT_EQ(hit.value(), 3u);
    evidence[hit.frame()] = hit.evidence();
  }
  EXPECT_THAT(evidence["topk_sum_fullgraph"],
              HasSubstr("compiled 3 cache entries, reaching cache_size_limit = 3"));
  EXPECT_THAT(evidence["topk_sum_fullgraph"],
              HasSubstr("refused 3 more compiles (0/3, 0/4, 0/5), each raising "
                        "RecompileLimitExceeded to its caller"));
  EXPECT_THAT(evidence["topk_sum"], HasSubstr("refused the next compile (1/3): from then on the "
                                              "frame runs eagerly"));
  // The values k was guarded on, per frame, in a table with a frame column.
  ASSERT_EQ(section.clusters_size(), 2);
  for (const v1::RecompileCluster& c : section.clusters()) {
    EXPECT_EQ(c.axis(), "k");
    EXPECT_THAT(c.guarded_values(), ElementsAre("1", "2", "3")) << c.frame();
  }
  EXPECT_EQ(section.frames_size(), 2);
}

// fixtures/torch_trace/torch-2.6/global_switches: five numerics switches between calls of a
// compiled MLP, each filed under the state it changed, with the call that sets it.
TEST(RecompilePassTest, TheGlobalSwitchesSceneNamesEachSetter) {
  const v1::RecompileSection section = RunPass(ImportScene("global_switches"));
  std::map<std::string, std::string> advice = AdviceByAxis(section);
  for (const auto& [axis, setter] : std::vector<std::pair<std::string, std::string>>{
           {"deterministic_algorithms", "`torch.use_deterministic_algorithms`"},
           {"default_dtype", "`torch.set_default_dtype`"},
           {"allow_tf32", "`torch.set_float32_matmul_precision`"},
           {"num_threads", "`torch.set_num_threads`"},
           {"deterministic_algorithms, deterministic_algorithms_warn_only",
            "`torch.use_deterministic_algorithms`"}}) {
    EXPECT_THAT(advice[axis], HasSubstr(absl::StrCat("(set by ", setter))) << axis;
  }
  EXPECT_THAT(advice["len(G['log'])"], HasSubstr("changes between calls"));
  for (const v1::Suggestion& s : section.suggestions())
    EXPECT_THAT(s.evidence(), ::testing::Not(HasSubstr("also named"))) << s.evidence();
}

// Hugging Face's `model(**batch)` with labels in training batches only (a torch 2.6 sandbox scene,
// the reason verbatim): an optional argument, expected once, not "pass the same type".
TEST(RecompilePassTest, AnOptionalTensorArgumentThatIsSometimesNoneIsExpectedOnce) {
  v1::SessionCapture capture = FrameCompiledOnce("forward");
  AddCompile(&capture, 0, 1,
             {"0/0: expected type of 'L['labels']' to be a tensor type, ' but found <class "
              "'NoneType'>"});
  const v1::RecompileSection section = RunPass(capture);
  ASSERT_EQ(section.suggestions_size(), 1);
  EXPECT_THAT(section.suggestions(0).text(),
              HasSubstr("`labels` is a tensor on some calls and None on others"));
  EXPECT_TRUE(section.suggestions(0).expected());
}

// fixtures/torch_trace/torch-2.6/detect_head (scenes/detect_head.py): a YOLO-style head fills its
// grid cache (a `torch.empty(0)` placeholder) on the first call, so the second recompiles on the
// grid's rank: the module's own state, expected once, not "passed with a different number of
// dimensions". And a CPU convolution picks its kernel by the input's size, a guard whose comment
// quotes torch's own `return F.conv2d(` (nn/modules/conv.py): torch's, expected once, not a
// branch of the user's to rewrite with `torch.where`.
TEST(RecompilePassTest, DetectHeadsGridCacheAndTorchsConvolutionGuard) {
  const v1::RecompileSection section = RunPass(ImportScene("detect_head"));
  EXPECT_EQ(section.total(), 4u);
  const std::map<std::string, const v1::RecompileCluster*> by_axis = ClustersByAxis(section);
  ASSERT_TRUE(by_axis.contains("self.detect.grid[0].ndim"));
  EXPECT_TRUE(by_axis.at("self.detect.grid[0].ndim")->expected());
  std::map<std::string, std::string> advice = AdviceByAxis(section);
  const std::string& grid = advice["self.detect.grid[0].ndim"];
  EXPECT_THAT(grid, HasSubstr("the module's own state, not an argument"));
  EXPECT_THAT(grid, HasSubstr("fill it before the first compiled call"));
  EXPECT_THAT(grid, ::testing::Not(HasSubstr("is passed with")));
  // The symbolic guard on the image size is torch's convolution's, not the user's branch.
  bool conv_seen = false;
  for (const v1::Suggestion& s : section.suggestions()) {
    if (!absl::StrContains(s.text(), "20480")) continue;
    conv_seen = true;
    EXPECT_TRUE(s.expected()) << s.text();
    EXPECT_THAT(s.text(), HasSubstr("added by torch's own code (`_subclasses/fake_impls.py:743"));
    EXPECT_THAT(s.text(), HasSubstr("picks a convolution's kernel by its input's size"));
    EXPECT_THAT(s.text(), ::testing::Not(HasSubstr("return F.conv2d(")));
    EXPECT_THAT(s.text(), ::testing::Not(HasSubstr("torch.where")));
  }
  EXPECT_TRUE(conv_seen);
  // The grid's own size guard is the user's branch (`if self.grid[i].shape[2:4] != ...`).
  EXPECT_THAT(advice["self.detect.grid[0][2]"], HasSubstr("from `if self.grid[i].shape[2:4]"));
}

}  // namespace
}  // namespace cl
