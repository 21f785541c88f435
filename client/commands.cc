#include "client/commands.h"

#include <algorithm>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "service/analysis.h"

namespace cl {
namespace {

// Flags several commands share.
const std::vector<std::string> kInputFlags = {"latest",       "sources",   "path_map",      "rank",
                                              "label",        "gpu",       "torch_version", "host",
                                              "project_root", "session_id"};
const std::vector<std::string> kRemoteFlags = {"server",   "deadline", "tls_ca",
                                               "tls_cert", "tls_key",  "token_file"};
const std::vector<std::string> kGateFlags = {
    "gates",   "max_graph_breaks", "no_new_graph_breaks", "max_recompiles",
    "fail_on", "fail_on_lint",     "max_regression"};
// What analyze writes, which check and run write too.
const std::vector<std::string> kAnalyzeFlags = {
    "base",   "html", "html_dir", "json",  "trace_events", "sarif",     "markdown",
    "passes", "db",   "threads",  "color", "quiet",        "all_ranks", "raw"};

std::vector<std::string> Join(std::vector<std::string> own,
                              std::initializer_list<const std::vector<std::string>*> shared) {
  for (const std::vector<std::string>* s : shared) own.insert(own.end(), s->begin(), s->end());
  return own;
}

std::vector<CommandHelp> MakeCommands() {
  return {
      {"analyze",
       "cl-client analyze HEAD [--base BASE] [--html F] [--html-dir DIR] [--json F]\n"
       "                  [--trace-events F] [--server HOST:PORT [--raw]] [--all-ranks | --rank "
       "N]\n"
       "                  [--passes recompile,...] [--gpu NAME] [--db DB]",
       "Explains a torch.compile session: recompilations, graph breaks, failures, compile time\n"
       "and caches, the IR diff against BASE, fusions, the roofline, divergence, lint; and on a\n"
       "draft export's log (torch.export.draft_export), what export could not prove. HEAD and\n"
       "BASE are captures (.cls.json, .cls.pb) or TORCH_TRACE logs (.log, .log.gz, or a\n"
       "directory: its rank logs dedicated_log_torch_trace_rank_<N>_*.log, or its one log, or\n"
       "--latest). With no --server the analysis runs in-process; with one, the capture is\n"
       "streamed to cl-server (with --raw the log itself is streamed and imported server-side).\n"
       "Either way the report is the same.\n"
       "--html writes the report as one page; --html-dir writes it as a site: DIR/index.html\n"
       "(the report, the stack trie, every compile in order, failures and restarts, the\n"
       "records of no compile) and a page per compile attempt in DIR/compiles/ (its stack,\n"
       "times, guards, dynamic shapes, graphs, output code, kernels, metrics, caches); with\n"
       "--raw the server renders the site and returns it. With --all-ranks, rank N's site is\n"
       "DIR/rankN/.\n"
       "--trace-events writes every compile and its phases (torch's chromium events) as Chrome\n"
       "Trace Event JSON for ui.perfetto.dev or chrome://tracing; with --all-ranks, one process\n"
       "per rank. With --base, the Compile time section diffs each missed graph's cache key\n"
       "against the base's (yesterday's run, or a cold run beside a warm one).\n"
       "Session facts a log does not record can be given: --gpu, --label, --torch-version, "
       "--host,\n"
       "--project-root, --session-id.\n" +
           AnalysisLimitsText(),
       Join({}, {&kAnalyzeFlags, &kInputFlags, &kRemoteFlags}),
       "  cl-client analyze examples/hero/head.cls.json --base examples/hero/base.cls.json \\\n"
       "      --html hero.html --json hero.report.json\n"
       "  cl-client analyze /tmp/trace_dir --gpu H100-SXM --label cluster=a,model=llama\n"
       "  cl-client analyze /tmp/trace_dir --html-dir out/site\n"
       "  cl-client analyze warm.log --base cold.log --trace-events warm.trace.json\n"
       "  cl-client analyze /tmp/trace_dir --all-ranks --json out/report.json\n"
       "  cl-client analyze s.cls.json --server 127.0.0.1:50051 --passes recompile\n"
       "  cl-client analyze run.log --server 127.0.0.1:50051 --raw\n"
       "  cl-client analyze examples/hero/head.cls.json --db lint/correctness.toml --html "
       "hero.html\n"},
      {"check",
       "cl-client check HEAD [--base BASE] [--max-graph-breaks N] [--no-new-graph-breaks]\n"
       "                [--max-recompiles N] [--fail-on failures,divergence,stale-cache,export]\n"
       "                [--fail-on-lint SEVERITY --db DB] [--max-regression METRIC=PCT,...]\n"
       "                [--gates gates.toml] [--sarif F] [--markdown F] [analyze flags]",
       "Analyzes HEAD as analyze does, then applies the gates: each prints one line naming the\n"
       "number and its threshold, and any that fails makes check exit 5. The report's Compile\n"
       "health section (health in the JSON) holds the numbers: graph breaks, distinct graph-break\n"
       "reasons, recompiles, cache-limit hits, failed compiles, guards, compile time, cache hit\n"
       "ratio, compiled graphs, kernels, kernel time (roofline estimate); with --base, the base's\n"
       "too, the change, and the graph breaks that are new or gone (by reason, file and\n"
       "function). --max-regression names those metrics (compile_time=10%: at most 10% worse\n"
       "than the base). A gate that cannot be decided fails (no base, a pass not run, unrated\n"
       "lint), except divergence and stale-cache on a log with no capture package: those pass\n"
       "as \"not checked\". --gates reads the same gates from a TOML file, e.g.\n"
       "  max_graph_breaks = 2\n"
       "  no_new_graph_breaks = true\n"
       "  fail_on = [\"failures\"]\n"
       "  [max_regression]\n"
       "  compile_time = \"10%\"\n"
       "with the flags given overriding it. With --server the server applies the gates.",
       Join({}, {&kGateFlags, &kAnalyzeFlags, &kInputFlags, &kRemoteFlags}),
       "  cl-client check head.log --base base.cls.json --no-new-graph-breaks \\\n"
       "      --max-regression compile_time=10% --sarif out.sarif --markdown summary.md\n"
       "  cl-client check run.log --max-graph-breaks 0 --fail-on failures\n"
       "  cl-client check head.cls.json --base base.cls.json --gates ci/gates.toml\n"},
      {"run", "cl-client run [--out DIR] [gates] [analyze flags] -- CMD ARGS...",
       "Runs CMD with TORCH_TRACE set to DIR/trace (DIR: --out, else a new cl-run-<time>\n"
       "folder here, printed), passing on stdin, stdout and stderr and the signals cl-client is\n"
       "sent (Ctrl-C reaches CMD as it would without run), then analyzes what CMD wrote: every\n"
       "rank of a torchrun, else its newest log. The report goes to DIR/report.html and\n"
       "DIR/report.json unless --html, --html-dir or --json say otherwise. The exit code is\n"
       "CMD's (128+N when a signal N ended it), or 5 when a gate failed, or 127 when CMD could\n"
       "not be started. A CMD that wrote no log is told so. --server analyzes on a cl-server.",
       Join({"out"}, {&kGateFlags, &kAnalyzeFlags, &kInputFlags, &kRemoteFlags}),
       "  cl-client run -- python train.py --steps 10\n"
       "  cl-client run --out ci/run --base ci/base.cls.json --no-new-graph-breaks \\\n"
       "      --sarif ci/run/compile-lens.sarif -- python smoke_test.py\n"
       "  cl-client run -- torchrun --nproc-per-node 4 train.py\n"},
      {"import-trace",
       "cl-client import-trace LOG|DIR -o OUT.cls.json [--latest] [--rank N] [--no-sources]\n"
       "                       [--path-map FROM=TO]",
       "Reads a TORCH_TRACE log (or a directory of them) into a capture file, with the user "
       "source\n"
       "files its stacks name when they can be read here (--path-map says where they are).",
       Join({"o", "quiet"}, {&kInputFlags}),
       "  cl-client import-trace run.log.gz -o run.cls.json --project-root /workspace\n"
       "  cl-client import-trace /tmp/trace_dir --rank 3 -o rank3.cls.pb --no-sources\n"},
      {"upload",
       "cl-client upload CAPTURE|LOG|DIR --server HOST:PORT [--deadline 120s] [--spool DIR]\n"
       "                 [--label K=V,...]",
       "For a job's teardown: sends the session to cl-server, retrying UNAVAILABLE,\n"
       "RESOURCE_EXHAUSTED, ABORTED, CANCELLED and DEADLINE_EXCEEDED with backoff until "
       "--deadline\n"
       "(all attempts together). If the server still has not taken it, the session is written to\n"
       "the spool and cl-client exits 4 straight away: nothing is lost. A session the server "
       "refuses\n"
       "as bad input (INVALID_ARGUMENT) is not spooled (exit 3). Gates (as check takes them, but\n"
       "none that compare with a base) run on the server, and a failed one exits 5, so a job's\n"
       "teardown can fail the job. A log file goes up as it is (the server imports it as it\n"
       "arrives), with the user files it names read here (--path-map; --no-sources: none); it is\n"
       "imported here only if it must be spooled. A directory or --rank is imported here.",
       Join({"spool", "quiet"}, {&kInputFlags, &kRemoteFlags, &kGateFlags}),
       "  cl-client upload /tmp/trace_dir --server dns:///compile-lens:50051 --deadline 30s \\\n"
       "      --label model=llama\n"},
      {"spool",
       "cl-client spool flush --server HOST:PORT [--spool DIR] [--deadline 120s]\n"
       "cl-client spool list [--spool DIR]",
       "flush sends the sessions waiting in the spool and removes each once the server analyzed "
       "it;\n"
       "it stops, leaving every file, at a setup error. list prints the spooled files.",
       Join({"spool", "quiet"}, {&kRemoteFlags}),
       "  cl-client spool flush --server dns:///compile-lens:50051\n"
       "  cl-client spool list\n"},
      {"health", "cl-client health --server HOST:PORT",
       "Asks a cl-server whether it is serving (the gRPC health service): exit 0 when it is.",
       kRemoteFlags, "  cl-client health --server 127.0.0.1:50051\n"},
      {"help",
       "cl-client help [COMMAND]",
       "Shows what a command does and the flags it takes.",
       {},
       "  cl-client help analyze\n"},
  };
}

constexpr char kExitCodes[] =
    "Exit codes:\n"
    "  0  the analysis ran (the report says what it found)\n"
    "  1  internal error\n"
    "  2  usage error: an unknown command or flag, a missing or bad value, a flag the command\n"
    "     does not take, an output path that cannot be written\n"
    "  3  the input was refused (not a TORCH_TRACE log, an unreadable or corrupt file, a "
    "malformed\n"
    "     capture, an unknown pass, an invalid correctness DB, credentials the server refused); "
    "the\n"
    "     message says why (for a DB: \"correctness DB line N: ...\")\n"
    "  4  the server was unavailable, overloaded or too slow (UNAVAILABLE, RESOURCE_EXHAUSTED,\n"
    "     DEADLINE_EXCEEDED); safe to retry. upload: the session is in the spool; spool flush:\n"
    "     some sessions are still there\n"
    "  5  check, run, upload: a gate failed (one line each on stderr)\n"
    "  127 run: the command could not be started\n"
    "  run otherwise exits with the command's own code\n";

// A synopsis of one or more lines, each indented two spaces.
std::string Indented(absl::string_view synopsis) {
  return absl::StrCat("  ", absl::StrReplaceAll(synopsis, {{"\n", "\n  "}}));
}

}  // namespace

const std::vector<CommandHelp>& Commands() {
  static const std::vector<CommandHelp>* commands = new std::vector<CommandHelp>(MakeCommands());
  return *commands;
}

const CommandHelp* FindCommand(absl::string_view name) {
  for (const CommandHelp& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool IsClientFlag(absl::string_view flag) {
  for (const CommandHelp& c : Commands()) {
    if (std::find(c.flags.begin(), c.flags.end(), flag) != c.flags.end()) return true;
  }
  return false;
}

std::string OverallHelp() {
  std::string out = "compile-lens client: explain a torch.compile session.\n\nUsage:\n";
  for (const CommandHelp& c : Commands()) absl::StrAppend(&out, Indented(c.synopsis), "\n");
  absl::StrAppend(
      &out,
      "\nRun 'cl-client help COMMAND' (or 'cl-client COMMAND --help') for what a "
      "command does,\nits flags and examples. Flags may be written with dashes or "
      "underscores; list flags\n(--label, --passes, --path-map, --fail-on, --max-regression) "
      "may be given more\nthan once.\n\n",
      kExitCodes);
  return out;
}

std::string CommandUsage(const CommandHelp& command) {
  std::string out =
      absl::StrCat("Usage:\n", Indented(command.synopsis), "\n\n", command.about, "\n");
  if (!command.flags.empty()) {
    std::vector<std::string> names = command.flags;
    std::sort(names.begin(), names.end());
    absl::StrAppend(&out, "\nFlags:\n");
    for (const std::string& name : names) {
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
      if (flag == nullptr) continue;  // a library linked without main.cc's flags (the tests)
      std::string spelled = name;
      std::replace(spelled.begin(), spelled.end(), '_', '-');
      absl::StrAppend(&out, "  --", spelled);
      if (const std::string d = flag->DefaultValue(); !d.empty() && d != "false")
        absl::StrAppend(&out, " (default: ", d, ")");
      absl::StrAppend(&out, "\n      ", flag->Help(), "\n");
    }
  }
  if (!command.examples.empty()) absl::StrAppend(&out, "\nExamples:\n", command.examples);
  return out;
}

std::string VersionNumber() { return CL_VERSION; }

std::string VersionLine() {
  return absl::StrCat("cl-client ", CL_VERSION, " (", CL_BUILD_TYPE, ")");
}

}  // namespace cl
