// cl-client: analyze a session capture in-process or on a cl-server, upload sessions (with a spool
// for when the server is away), check a server's health.
// Flags are read here and nowhere else.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analyzers/health/gates.h"
#include "analyzers/lowered_facts.h"
#include "analyzers/roofline/gpu_specs.h"
#include "capture/capture_io.h"
#include "capture/schema.h"
#include "capture/torch_trace/importer.h"
#include "client/analyze_client.h"
#include "client/child_process.h"
#include "client/command_line.h"
#include "client/commands.h"
#include "client/exit_codes.h"
#include "client/huge_pages.h"
#include "client/inputs.h"
#include "client/progress.h"
#include "client/upload.h"
#include "common/file_io.h"
#include "common/gz_read.h"
#include "common/number_format.h"
#include "service/render/html_site.h"
#include "service/render/markdown.h"
#include "service/render/render.h"
#include "service/render/sarif.h"
#include "service/render/trace_events.h"

ABSL_FLAG(std::string, base, "",
          "a base capture (the same model at an earlier commit or torch version) to diff against");
ABSL_FLAG(std::string, server, "",
          "analyze on this cl-server (HOST:PORT or a gRPC target) instead of in-process");
ABSL_FLAG(std::string, html, "", "write the self-contained HTML report here");
ABSL_FLAG(std::string, html_dir, "",
          "write the report as a site here: index.html and a page per compile (compiles/)");
ABSL_FLAG(std::string, json, "", "write the JSON report here");
ABSL_FLAG(std::string, trace_events, "",
          "write the compiles' phases here as Chrome Trace Event JSON (ui.perfetto.dev, "
          "chrome://tracing); every rank's with --all-ranks");
ABSL_FLAG(std::vector<std::string>, passes, {},
          "run only these passes (comma-separated); default: all");
ABSL_FLAG(std::string, gpu, "",
          "GPU to model for the roofline (overrides the capture's session.gpu)");
ABSL_FLAG(
    std::string, db, "",
    "a correctness.toml (lint/correctness.toml ships with compile-lens) that rates the lint "
    "findings: "
    "severity, remedy, issue links; an invalid one is refused (exit 3) with the line it fails on");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(120), "give up on the server after this long");
ABSL_FLAG(int, threads, 0,
          "in-process analysis threads; 0 = one for a small session (under 20,000 graph nodes "
          "and 200 compiles), else one per hardware thread");
ABSL_FLAG(std::string, color, "auto", "colour the summary: auto (on a terminal), always, never");
ABSL_FLAG(bool, quiet, false, "print no summary");
// Reading TORCH_TRACE logs.
ABSL_FLAG(std::string, o, "",
          "import-trace: the capture to write (.cls.json, or .cls.pb for binary)");
ABSL_FLAG(bool, latest, false, "a directory holding several non-rank logs: take the newest");
ABSL_FLAG(bool, sources, true, "read the user source files the trace names (--no-sources to skip)");
ABSL_FLAG(std::vector<std::string>, path_map, {},
          "FROM=TO[,FROM=TO...]: a trace path prefix and where those files are here, for reading "
          "sources");
ABSL_FLAG(int, rank, -1,
          "a multi-rank directory: the rank to analyze or write (default: the lowest)");
ABSL_FLAG(bool, all_ranks, false,
          "a multi-rank directory: analyze every rank (outputs get .rank<N> before the extension)");
ABSL_FLAG(bool, raw, false,
          "with --server and a log: send the raw log and let the server import it");
// Session facts a log does not record.
ABSL_FLAG(std::vector<std::string>, label, {},
          "KEY=VALUE[,KEY=VALUE...] fleet labels for the session (cluster, model, ...)");
ABSL_FLAG(std::string, torch_version, "", "the session's torch version");
ABSL_FLAG(std::string, host, "", "the session's host");
ABSL_FLAG(std::string, project_root, "",
          "the project root the trace's paths are under; locations are reported relative to it");
ABSL_FLAG(std::string, session_id, "", "the session id (default: one derived from the log)");
// Transport security (cl-server --tls_cert/--tls_key/--tls_client_ca/--token_file).
ABSL_FLAG(std::string, tls_ca, "", "PEM roots for the server's certificate: connect with TLS");
ABSL_FLAG(std::string, tls_cert, "",
          "this client's PEM certificate, for servers that require mTLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "this client's PEM private key (with --tls_cert)");
ABSL_FLAG(std::string, token_file, "", "a file holding the bearer token the server expects");
// CI outputs.
ABSL_FLAG(std::string, sarif, "",
          "write the findings here as SARIF 2.1.0 (GitHub code scanning): lint patterns, graph "
          "breaks, recompiles, failed compiles, each at its user file and line");
ABSL_FLAG(std::string, markdown, "",
          "write a short Markdown summary here (a pull-request comment, $GITHUB_STEP_SUMMARY): "
          "gates, the compile-health table, new graph breaks, top findings");
// Gates (check, run, upload): a failed one exits 5.
ABSL_FLAG(std::string, gates, "",
          "a gate file (TOML: max_graph_breaks, no_new_graph_breaks, max_recompiles, fail_on, "
          "fail_on_lint, [max_regression]); flags given here override it");
ABSL_FLAG(int, max_graph_breaks, -1,
          "fail when the head has more graph breaks than this (-1: no limit)");
ABSL_FLAG(bool, no_new_graph_breaks, false,
          "fail on a graph break (reason, file, function) the base did not have (needs --base)");
ABSL_FLAG(int, max_recompiles, -1,
          "fail when the head recompiles more often than this (-1: no limit)");
ABSL_FLAG(std::vector<std::string>, fail_on, {},
          "fail on any of: failures (a failed compile), divergence (compiled output diverged "
          "from eager), stale-cache (a stale cached graph served), export (what a draft export "
          "could not prove: a decision taken from the example inputs, an op with no fake kernel)");
ABSL_FLAG(std::string, fail_on_lint, "",
          "fail on a lint finding rated at or above this: info, warning or error (needs --db, "
          "which rates them)");
ABSL_FLAG(std::vector<std::string>, max_regression, {},
          "METRIC=PERCENT[,...]: fail when a health metric gets worse than the base by more "
          "(compile_time=10%,guards=20%; needs --base)");
ABSL_FLAG(std::string, out, "",
          "run: the folder for the trace (OUT/trace) and the reports (default: a new "
          "cl-run-<time> folder here)");
// Uploads.
ABSL_FLAG(std::string, spool, "",
          "upload / spool: where undeliverable sessions wait (default $CL_SPOOL_DIR, else "
          "~/.cache/compile-lens/spool)");

namespace {

cl::ProgressLine& Progress();

int Fail(const absl::Status& status) {
  Progress().Clear();
  std::cerr << "cl-client: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
            << "\n";
  return cl::ExitCodeFor(status);
}

// The command being run, for the usage hint ("Run 'cl-client help analyze'"); it points into the
// command line, which lives as long as main.
absl::string_view current_command;

int Usage(absl::string_view why) {
  std::cerr << "cl-client: " << why << "\nRun 'cl-client help"
            << (current_command.empty() ? "" : absl::StrCat(" ", current_command))
            << "' for usage.\n";
  return cl::kExitUsage;
}

// An output the flags name that cannot be written is a usage error, found before any work is done:
// its directory must exist and be writable (the file itself may not exist yet).
int CheckOutput(absl::string_view flag, const std::string& path) {
  if (path.empty()) return cl::kExitOk;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return Usage(absl::StrCat("--", flag, " ", path, ": is a directory (give a file name)"));
  }
  const fs::path dir = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path();
  if (!fs::is_directory(dir, ec)) {
    return Usage(absl::StrCat("--", flag, " ", path, ": cannot be written (", dir.string(),
                              " is not a directory)"));
  }
  if (access(path.c_str(), F_OK) == 0 ? access(path.c_str(), W_OK) != 0
                                      : access(dir.c_str(), W_OK) != 0) {
    return Usage(absl::StrCat("--", flag, " ", path, ": cannot be written (permission denied)"));
  }
  return cl::kExitOk;
}

// --html-dir names a folder that exists and can be written, or one that can be made in one that
// does.
int CheckSiteDir(const std::string& dir) {
  if (dir.empty()) return cl::kExitOk;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    return Usage(absl::StrCat("--html-dir ", dir, ": is a file (give a folder)"));
  }
  fs::path existing = fs::absolute(dir, ec);
  while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
  if (access(existing.c_str(), W_OK) != 0) {
    return Usage(absl::StrCat("--html-dir ", dir, ": cannot be written (", existing.string(),
                              ": permission denied)"));
  }
  return cl::kExitOk;
}

bool UseColor() {
  const std::string mode = absl::GetFlag(FLAGS_color);
  if (mode == "always") return true;
  if (mode == "never") return false;
  return isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
}

// --server and the transport flags.
cl::RemoteOptions Remote() {
  cl::RemoteOptions remote;
  remote.target = absl::GetFlag(FLAGS_server);
  remote.deadline = absl::GetFlag(FLAGS_deadline);
  remote.security = {absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
                     absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_token_file)};
  return remote;
}

// The import's progress on the terminal (client/progress.h), for the whole run.
cl::ProgressLine& Progress() {
  static auto* const line =
      new cl::ProgressLine(std::cerr, isatty(STDERR_FILENO) && !absl::GetFlag(FLAGS_quiet));
  return *line;
}

// Remote(), drawing the upload's progress: `what` named, `total` bytes (0 when not known).
cl::RemoteOptions RemoteWithProgress(const std::string& what, uint64_t total) {
  cl::RemoteOptions remote = Remote();
  remote.on_sent = [what, total, target = remote.target](uint64_t sent) {
    if (total > 0) sent = std::min(sent, total);
    Progress().Update(what, sent, total, [&] { return absl::StrCat("to ", target); });
  };
  return remote;
}

// The bytes a capture's upload sends, about.
uint64_t UploadBytes(const cl::AssembledCaptures& captures) {
  return captures.head.ByteSizeLong() + (captures.base ? captures.base->ByteSizeLong() : 0);
}

// How a raw log travels to the server: its header (the session facts given on the command line,
// which the server applies over the log's; the log's name for the import's diagnostics; which
// graphs' nodes to keep, as an import here would) and the remote options, with a progress line
// over the log's size (unknown for a .gz, which inflates).
struct RawLog {
  cl::v1::CaptureHeader header;
  cl::RemoteOptions remote;
  const cl::ImportOptions* sources = nullptr;  // the user files to offer, unless --no-sources
};
RawLog RawLogFor(const std::string& path, const cl::InputOptions& in) {
  RawLog raw;
  cl::v1::SessionCapture facts;
  cl::ApplyOverrides(in.overrides, &facts);
  raw.header.set_schema(cl::SchemaVersion());
  raw.header.set_source_name(std::filesystem::path(path).filename().string());
  raw.header.set_post_grad_nodes_only(in.import.graph_nodes == cl::GraphNodes::kLoweredOnly);
  if (facts.has_session()) *raw.header.mutable_session() = facts.session();
  std::error_code size_error;
  const uint64_t size =
      absl::EndsWith(path, ".gz") ? 0 : std::filesystem::file_size(path, size_error);
  raw.remote = RemoteWithProgress(path, size_error ? 0 : size);
  raw.sources = in.import.read_sources ? &in.import : nullptr;
  return raw;
}

// The import and session flags, read once.
absl::StatusOr<cl::InputOptions> ReadInputOptions() {
  cl::InputOptions in;
  in.import.progress = [](const std::string& path, uint64_t read, uint64_t size, uint64_t records) {
    Progress().Update(path, read, size,
                      [&] { return cl::FormatCount(records, "record", "records"); });
    if (size > 0 && read >= size) Progress().Clear();
  };
  in.import.latest = absl::GetFlag(FLAGS_latest);
  in.import.read_sources = absl::GetFlag(FLAGS_sources);
  for (const std::string& m : absl::GetFlag(FLAGS_path_map)) {
    absl::StatusOr<std::pair<std::string, std::string>> kv = cl::SplitAssignment(m, "path-map");
    if (!kv.ok()) return kv.status();
    in.import.path_map.push_back(*kv);
  }
  if (const int rank = absl::GetFlag(FLAGS_rank); rank >= 0) in.rank = rank;
  cl::SessionOverrides& o = in.overrides;
  for (const std::string& l : absl::GetFlag(FLAGS_label)) {
    absl::StatusOr<std::pair<std::string, std::string>> kv = cl::SplitAssignment(l, "label");
    if (!kv.ok()) return kv.status();
    o.labels[kv->first] = kv->second;
  }
  o.id = absl::GetFlag(FLAGS_session_id);
  o.gpu = absl::GetFlag(FLAGS_gpu);
  if (!o.gpu.empty() && cl::FindGpuSpec(o.gpu) == nullptr) {
    std::vector<std::string> known;
    for (const cl::GpuSpec& spec : cl::GpuSpecs()) known.emplace_back(spec.name);
    return absl::InvalidArgumentError(absl::StrCat(
        "--gpu ", o.gpu, ": not a GPU compile-lens knows (", absl::StrJoin(known, ", "), ")"));
  }
  o.torch_version = absl::GetFlag(FLAGS_torch_version);
  o.host = absl::GetFlag(FLAGS_host);
  o.project_root = absl::GetFlag(FLAGS_project_root);
  in.import.project_root = o.project_root;
  return in;
}

// A command's captures, at its end: the process exits next, and the system takes their memory
// back whole, where freeing them message by message took 5 % of an import of the 73 MB trace
// (bench/README.md, "Against tlparse"). Held from a static, so that LeakSanitizer counts them
// reachable; each command leaves its captures once.
void LeaveToExit(cl::v1::SessionCapture&& capture) {
  static auto* const kept = new std::vector<cl::v1::SessionCapture>;
  kept->push_back(std::move(capture));
}

int ImportTrace(const std::string& path) {
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty()) return Usage("import-trace needs -o OUT.cls.json");
  if (const int code = CheckOutput("o", out); code != cl::kExitOk) return code;
  absl::StatusOr<cl::InputOptions> in = ReadInputOptions();
  if (!in.ok()) return Usage(in.status().message());
  // A capture package carries the log's record texts, so that a site can be made from it alone.
  in->import.keep_record_texts = true;
  // One log: each graph and each record goes out as soon as it is parsed (to the .cls.pb, or to
  // scratch files the .cls.json is then printed around), and the graphs' nodes and the records'
  // texts (most of a capture) are not kept until the end. Else the capture is made, then written.
  std::error_code ec;
  const bool streamed = cl::IsTraceInput(path) && !std::filesystem::is_directory(path, ec);
  absl::StatusOr<cl::v1::SessionCapture> capture =
      streamed ? cl::WriteCaptureAsMade(out,
                                        [&](const cl::CaptureSinks& sinks) {
                                          in->import.graph_sink = sinks.graph;
                                          in->import.record_sink = sinks.record;
                                          return cl::LoadSession(path, *in);
                                        })
               : cl::LoadSession(path, *in);
  Progress().Clear();
  if (!capture.ok()) return Fail(capture.status());
  if (!streamed) {
    if (absl::Status s = cl::WriteCaptureFile(out, *capture); !s.ok()) return Fail(s);
  }
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::cout << out << ": " << cl::FormatCount(capture->frames_size(), "frame", "frames") << ", "
              << cl::FormatCount(capture->compiles_size(), "compile", "compiles") << ", "
              << cl::FormatCount(capture->graphs_size(), "graph", "graphs") << ", "
              << cl::FormatCount(capture->kernels_size(), "kernel", "kernels") << ", "
              << cl::FormatCount(capture->sources_size(), "source file", "source files") << ", "
              << cl::FormatCount(capture->diagnostics_size(), "diagnostic", "diagnostics") << "\n";
  }
  LeaveToExit(*std::move(capture));
  return cl::kExitOk;
}

// "out/hero.html" for rank 3 -> "out/hero.rank3.html".
std::string ForRank(const std::string& path, std::optional<int> rank) {
  if (!rank || path.empty()) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() /
          (p.stem().string() + ".rank" + std::to_string(*rank) + p.extension().string()))
      .string();
}

// "out/site" for rank 3 -> "out/site/rank3".
std::string SiteDirForRank(const std::string& dir, std::optional<int> rank) {
  if (!rank || dir.empty()) return dir;
  return (std::filesystem::path(dir) / ("rank" + std::to_string(*rank))).string();
}

// The lines of the gates that failed in the reports delivered so far (check and run exit 5 on
// any).
std::vector<std::string> failed_gate_lines;

// The gates the flags and --gates ask for; `command` needs a base for the comparing ones.
absl::StatusOr<cl::v1::Gates> ReadGates() {
  cl::v1::Gates gates;
  if (const std::string file = absl::GetFlag(FLAGS_gates); !file.empty()) {
    absl::StatusOr<std::string> text = cl::ReadFile(file);
    if (!text.ok()) return text.status();
    absl::StatusOr<cl::v1::Gates> parsed = cl::ParseGatesFile(*text, file);
    if (!parsed.ok()) return parsed.status();
    gates = *std::move(parsed);
  }
  cl::v1::Gates flags;
  if (const int n = absl::GetFlag(FLAGS_max_graph_breaks); n >= 0) flags.set_max_graph_breaks(n);
  flags.set_no_new_graph_breaks(absl::GetFlag(FLAGS_no_new_graph_breaks));
  if (const int n = absl::GetFlag(FLAGS_max_recompiles); n >= 0) flags.set_max_recompiles(n);
  if (const auto words = absl::GetFlag(FLAGS_fail_on); !words.empty()) {
    if (absl::Status s = cl::ParseFailOnFlag(absl::StrJoin(words, ","), &flags); !s.ok())
      return absl::InvalidArgumentError(absl::StrCat("--fail-on: ", s.message()));
  }
  flags.set_fail_on_lint(absl::GetFlag(FLAGS_fail_on_lint));
  if (const auto limits = absl::GetFlag(FLAGS_max_regression); !limits.empty()) {
    if (absl::Status s = cl::ParseRegressionFlag(absl::StrJoin(limits, ","), &flags); !s.ok())
      return s;
  }
  cl::MergeGates(flags, &gates);
  if (absl::Status s = cl::ValidateGates(gates); !s.ok()) return s;
  const bool local = absl::GetFlag(FLAGS_server).empty();
  if (!gates.fail_on_lint().empty() && local && absl::GetFlag(FLAGS_db).empty()) {
    return absl::InvalidArgumentError(
        "--fail-on-lint needs --db: the correctness DB rates the lint findings");
  }
  return gates;
}

// A usage error when a gate compares with a base and there is none.
// The flag of a gate in `gates` that compares with a base, or empty.
absl::string_view ComparingGate(const cl::v1::Gates& gates) {
  if (gates.no_new_graph_breaks()) return "--no-new-graph-breaks";
  if (!gates.max_regression().empty()) return "--max-regression";
  return "";
}

absl::Status CheckGatesHaveBase(const cl::v1::Gates& gates) {
  const absl::string_view flag = ComparingGate(gates);
  if (flag.empty() || !absl::GetFlag(FLAGS_base).empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(flag, " compares with a base: give --base"));
}

// --trace-events: the captures' compile phases on a timeline.
int WriteTraceEvents(const std::vector<const cl::v1::SessionCapture*>& captures) {
  const std::string path = absl::GetFlag(FLAGS_trace_events);
  if (path.empty()) return cl::kExitOk;
  absl::StatusOr<std::string> json = cl::RenderTraceEvents(captures);
  if (!json.ok()) return Fail(json.status());
  if (absl::Status s = cl::WriteFile(path, *json); !s.ok()) return Fail(s);
  if (!absl::GetFlag(FLAGS_quiet)) std::cout << "wrote " << path << "\n";
  return cl::kExitOk;
}

// Writes what the flags ask for: the HTML and JSON reports, the site (of `capture`, the head the
// report is about) and the summary.
int Deliver(const cl::v1::AnalyzeResponse& response, std::optional<int> rank,
            const cl::v1::SessionCapture* capture) {
  if (const std::string html = ForRank(absl::GetFlag(FLAGS_html), rank); !html.empty()) {
    if (absl::Status s = cl::WriteFile(html, response.html()); !s.ok()) return Fail(s);
  }
  // The site: rendered here from the capture, or (--raw) the server's, written as it came.
  const std::string site = SiteDirForRank(absl::GetFlag(FLAGS_html_dir), rank);
  uint64_t site_pages = 0;
  if (!site.empty()) {
    cl::DirectorySink sink(site);
    if (capture != nullptr) {
      if (absl::Status s = cl::RenderHtmlSite(*capture, response.report(), sink); !s.ok())
        return Fail(s);
      site_pages = capture->compiles_size();
    } else if (!response.site_error().empty()) {
      return Fail(absl::ResourceExhaustedError(
          absl::StrCat("the server returned no site: ", response.site_error())));
    } else {
      for (const cl::v1::SiteFile& file : response.site()) {
        if (absl::Status s = sink.Write(file.path(), file.content()); !s.ok()) return Fail(s);
        // A compile's page is compiles/<compile>.html; its folder holds its records.
        const absl::string_view in_compiles = absl::StripPrefix(file.path(), "compiles/");
        site_pages += in_compiles.size() < file.path().size() &&
                      !absl::StrContains(in_compiles, '/') && absl::EndsWith(in_compiles, ".html");
      }
    }
  }
  if (const std::string json = ForRank(absl::GetFlag(FLAGS_json), rank); !json.empty()) {
    absl::StatusOr<std::string> text = cl::RenderJson(response.report());
    if (!text.ok()) return Fail(text.status());
    if (absl::Status s = cl::WriteFile(json, *text); !s.ok()) return Fail(s);
  }
  if (const std::string sarif = ForRank(absl::GetFlag(FLAGS_sarif), rank); !sarif.empty()) {
    absl::StatusOr<std::string> text = cl::RenderSarif(response.report(), cl::VersionNumber());
    if (!text.ok()) return Fail(text.status());
    if (absl::Status s = cl::WriteFile(sarif, *text); !s.ok()) return Fail(s);
  }
  if (const std::string md = ForRank(absl::GetFlag(FLAGS_markdown), rank); !md.empty()) {
    cl::MarkdownLinks links;
    links.html = ForRank(absl::GetFlag(FLAGS_html), rank);
    if (!site.empty()) links.site = (std::filesystem::path(site) / "index.html").string();
    if (absl::Status s = cl::WriteFile(md, cl::RenderMarkdown(response.report(), links)); !s.ok())
      return Fail(s);
  }
  for (const cl::v1::GateResult& g : response.report().health().gates()) {
    if (!g.passed())
      failed_gate_lines.push_back(
          absl::StrCat(rank ? absl::StrCat("rank ", *rank, ": ") : "", g.message()));
  }
  Progress().Clear();
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::cout << cl::RenderText(response.report(), UseColor());
    // Where the reports went: the last thing a reader looks for.
    if (const std::string html = ForRank(absl::GetFlag(FLAGS_html), rank); !html.empty())
      std::cout << "wrote " << html << "\n";
    if (!site.empty()) {
      std::cout << "wrote " << (std::filesystem::path(site) / "index.html").string() << " and "
                << cl::FormatCount(site_pages, "compile page", "compile pages") << "\n";
    }
    for (const auto& path :
         {absl::GetFlag(FLAGS_json), absl::GetFlag(FLAGS_sarif), absl::GetFlag(FLAGS_markdown)}) {
      if (!path.empty()) std::cout << "wrote " << ForRank(path, rank) << "\n";
    }
  }
  return cl::kExitOk;
}

absl::StatusOr<cl::v1::AnalyzeResponse> Run(const cl::AssembledCaptures& captures,
                                            const cl::v1::AnalyzeOptions& options,
                                            const cl::LoweredFacts* head_lowered = nullptr) {
  const std::string server = absl::GetFlag(FLAGS_server);
  if (server.empty()) {
    return cl::AnalyzeInProcess(captures, options, absl::GetFlag(FLAGS_threads), head_lowered);
  }
  absl::StatusOr<cl::v1::AnalyzeResponse> response = cl::AnalyzeRemote(
      captures, options, RemoteWithProgress(captures.head.session().id(), UploadBytes(captures)));
  Progress().Clear();
  return response;
}

// A multi-rank directory, every rank: one report each (rank N's files get ".rankN").
int AnalyzeAllRanks(const std::string& dir, const cl::InputOptions& in,
                    const cl::v1::AnalyzeOptions& options) {
  absl::StatusOr<std::vector<cl::v1::SessionCapture>> ranks = cl::ImportTrace(dir, in.import);
  if (!ranks.ok()) return Fail(ranks.status());
  for (cl::v1::SessionCapture& capture : *ranks) {
    cl::ApplyOverrides(in.overrides, &capture);
    const int rank = capture.session().rank();
    absl::StatusOr<cl::v1::AnalyzeResponse> response =
        Run({capture, std::nullopt}, options);  // a copy: the site is rendered from it after
    if (!response.ok()) return Fail(response.status());
    if (const int code = Deliver(*response, rank, &capture); code != cl::kExitOk) return code;
  }
  std::vector<const cl::v1::SessionCapture*> all;
  for (const cl::v1::SessionCapture& capture : *ranks) all.push_back(&capture);
  return WriteTraceEvents(all);
}

int Analyze(const std::string& head_path, const cl::v1::Gates& gates) {
  absl::StatusOr<cl::InputOptions> in = ReadInputOptions();
  if (!in.ok()) return Usage(in.status().message());
  if (const int code = CheckOutput("sarif", absl::GetFlag(FLAGS_sarif)); code != cl::kExitOk)
    return code;
  if (const int code = CheckOutput("markdown", absl::GetFlag(FLAGS_markdown)); code != cl::kExitOk)
    return code;
  if (const int code = CheckOutput("html", absl::GetFlag(FLAGS_html)); code != cl::kExitOk)
    return code;
  if (const int code = CheckOutput("json", absl::GetFlag(FLAGS_json)); code != cl::kExitOk)
    return code;
  if (const int code = CheckSiteDir(absl::GetFlag(FLAGS_html_dir)); code != cl::kExitOk)
    return code;
  if (const int code = CheckOutput("trace-events", absl::GetFlag(FLAGS_trace_events));
      code != cl::kExitOk)
    return code;
  if (absl::GetFlag(FLAGS_raw) && !absl::GetFlag(FLAGS_trace_events).empty())
    return Usage("--trace-events reads the capture here: it takes no --raw");
  // The site shows the log itself: the import keeps each record's text.
  in->import.keep_record_texts = !absl::GetFlag(FLAGS_html_dir).empty();
  // One session's passes read only the post-grad graphs' nodes (the site and the trace events
  // none); a comparison with a base diffs every graph's.
  if (absl::GetFlag(FLAGS_base).empty()) in->import.graph_nodes = cl::GraphNodes::kLoweredOnly;
  cl::v1::AnalyzeOptions options;
  for (const std::string& pass : absl::GetFlag(FLAGS_passes)) options.add_passes(pass);
  options.set_render_html(!absl::GetFlag(FLAGS_html).empty());
  if (cl::HasGates(gates)) *options.mutable_gates() = gates;
  if (const std::string db = absl::GetFlag(FLAGS_db); !db.empty()) {
    absl::StatusOr<std::string> text = cl::ReadFile(db);
    if (!text.ok()) return Fail(text.status());
    options.set_correctness_db(*text);
  }
  const bool raw = absl::GetFlag(FLAGS_raw);
  const std::string base_path = absl::GetFlag(FLAGS_base);
  const std::string server = absl::GetFlag(FLAGS_server);

  if (absl::GetFlag(FLAGS_all_ranks)) {
    if (!std::filesystem::is_directory(head_path))
      return Usage("--all-ranks takes a directory of rank logs");
    if (raw || !base_path.empty()) return Usage("--all-ranks takes no --raw or --base");
    return AnalyzeAllRanks(head_path, *in, options);
  }

  if (raw) {
    if (server.empty()) return Usage("--raw needs --server");
    // The log goes up as it is: the server imports it and returns the site it renders.
    options.set_render_site(!absl::GetFlag(FLAGS_html_dir).empty());
    if (!base_path.empty()) return Usage("--raw streams one log; it takes no --base");
    if (!cl::IsTraceInput(head_path) || std::filesystem::is_directory(head_path)) {
      return Usage("--raw streams one TORCH_TRACE log file (.log or .log.gz)");
    }
    const RawLog log = RawLogFor(head_path, *in);
    absl::StatusOr<cl::v1::AnalyzeResponse> response =
        cl::AnalyzeRemoteTrace(head_path, log.header, options, log.remote, log.sources);
    Progress().Clear();
    if (!response.ok()) return Fail(response.status());
    return Deliver(*response, std::nullopt, nullptr);
  }

  cl::AssembledCaptures captures;
  // Analyzed here with no base: the passes' reading of each lowered graph is made as the log is
  // imported, and the graph kept without its nodes.
  cl::LoweredFacts lowered;
  if (server.empty() && base_path.empty()) in->lowered_facts = &lowered;
  absl::StatusOr<cl::v1::SessionCapture> head = cl::LoadSession(head_path, *in);
  if (!head.ok()) return Fail(head.status());
  captures.head = std::move(*head);
  if (!base_path.empty()) {
    absl::StatusOr<cl::v1::SessionCapture> base = cl::LoadSession(base_path, *in);
    if (!base.ok()) return Fail(base.status());
    captures.base = std::move(*base);
  }
  absl::StatusOr<cl::v1::AnalyzeResponse> response = Run(captures, options, &lowered);
  if (!response.ok()) return Fail(response.status());
  if (const int code = Deliver(*response, std::nullopt, &captures.head); code != cl::kExitOk)
    return code;
  const int code = WriteTraceEvents({&captures.head});
  LeaveToExit(std::move(captures.head));
  if (captures.base) LeaveToExit(*std::move(captures.base));
  return code;
}

// After the reports: exit 5 with every failed gate on stderr (the summary listed them all), or 0.
int GateOutcome(const std::vector<std::string>& failed) {
  if (failed.empty()) return cl::kExitOk;
  for (const std::string& line : failed) std::cerr << "cl-client: gate failed: " << line << "\n";
  return cl::kExitGateFailed;
}

int GateOutcome(const cl::v1::HealthSection& health) {
  std::vector<std::string> failed;
  for (const cl::v1::GateResult& g : health.gates())
    if (!g.passed()) failed.push_back(g.message());
  return GateOutcome(failed);
}

// check: the analysis, then the gates.
int Check(const std::string& head_path) {
  absl::StatusOr<cl::v1::Gates> gates = ReadGates();
  if (!gates.ok()) return Usage(gates.status().message());
  if (absl::Status s = CheckGatesHaveBase(*gates); !s.ok()) return Usage(s.message());
  if (!cl::HasGates(*gates))
    return Usage(
        "check needs a gate (--max-graph-breaks, --no-new-graph-breaks, --gates FILE, ...)");
  if (const int code = Analyze(head_path, *gates); code != cl::kExitOk) return code;
  return GateOutcome(failed_gate_lines);
}

// "cl-run-20261203-154501" in the current folder.
std::string DefaultRunDir() {
  return absl::StrCat("cl-run-",
                      absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()));
}

// run: CMD with TORCH_TRACE set, then the analysis of what it wrote.
int RunCommand(const std::vector<std::string>& command) {
  namespace fs = std::filesystem;
  absl::StatusOr<cl::v1::Gates> gates = ReadGates();
  if (!gates.ok()) return Usage(gates.status().message());
  if (absl::Status s = CheckGatesHaveBase(*gates); !s.ok()) return Usage(s.message());
  const std::string out =
      absl::GetFlag(FLAGS_out).empty() ? DefaultRunDir() : absl::GetFlag(FLAGS_out);
  std::error_code ec;
  const fs::path trace = fs::absolute(fs::path(out) / "trace", ec);
  if (fs::exists(trace, ec) && !fs::is_empty(trace, ec))
    return Usage(absl::StrCat("--out ", out, ": ", trace.string(),
                              " already holds a trace (give a new folder)"));
  fs::create_directories(trace, ec);
  if (ec)
    return Usage(
        absl::StrCat("--out ", out, ": cannot make ", trace.string(), " (", ec.message(), ")"));
  // The reports go beside the trace unless the flags put them elsewhere.
  if (absl::GetFlag(FLAGS_html).empty() && absl::GetFlag(FLAGS_html_dir).empty())
    absl::SetFlag(&FLAGS_html, (fs::path(out) / "report.html").string());
  if (absl::GetFlag(FLAGS_json).empty())
    absl::SetFlag(&FLAGS_json, (fs::path(out) / "report.json").string());
  if (!absl::GetFlag(FLAGS_quiet))
    std::cerr << "cl-client: running " << command[0] << " with TORCH_TRACE=" << trace.string()
              << "\n";
  absl::StatusOr<cl::ChildExit> child = cl::RunChild(command, {{"TORCH_TRACE", trace.string()}});
  if (!child.ok()) {
    std::cerr << "cl-client: " << child.status().message() << "\n";
    return cl::kExitCannotRun;
  }
  if (child->signal != 0 && !absl::GetFlag(FLAGS_quiet))
    std::cerr << "cl-client: " << command[0] << " was ended by signal " << child->signal << "\n";
  absl::StatusOr<std::vector<std::string>> logs =
      cl::FindTraceLogs(trace.string(), /*latest=*/true);
  if (!logs.ok() || logs->empty()) {
    std::cerr << "cl-client: " << command[0] << " wrote no TORCH_TRACE log (" << trace.string()
              << " is empty): did it call torch.compile?\n";
    if (cl::HasGates(*gates) && child->code == 0) {
      std::cerr << "cl-client: the gates cannot be checked without a log\n";
      return cl::kExitGateFailed;
    }
    return child->code;
  }
  // Every rank of a torchrun; the newest log of a command that ran several processes.
  if (logs->size() > 1) {
    absl::SetFlag(&FLAGS_all_ranks, true);
  } else {
    absl::SetFlag(&FLAGS_latest, true);
  }
  const int code = Analyze(trace.string(), *gates);
  if (code != cl::kExitOk) return child->code != 0 ? child->code : code;
  if (!failed_gate_lines.empty()) return GateOutcome(failed_gate_lines);
  return child->code;
}

cl::RetryPolicy UploadPolicy() {
  cl::RetryPolicy policy;
  policy.deadline = absl::GetFlag(FLAGS_deadline);
  return policy;
}

// How an upload ends: the answer's gates, or the session in the spool. `capture` is the session
// to spool (called only then: a log streamed as it is is imported here only if it must wait).
int UploadEnded(const std::string& what, const cl::UploadOutcome& outcome,
                absl::FunctionRef<absl::StatusOr<cl::v1::SessionCapture>()> capture) {
  const std::string server = absl::GetFlag(FLAGS_server);
  if (outcome.response.ok()) {
    if (!absl::GetFlag(FLAGS_quiet)) {
      std::cout << "cl-client: uploaded session "
                << outcome.response->report().metadata().session_id() << " to " << server << " ("
                << cl::FormatCount(outcome.attempts, "attempt", "attempts") << ")\n";
    }
    return GateOutcome(outcome.response->report().health());
  }
  const absl::Status failure = outcome.response.status();
  if (cl::IsRefusedCapture(failure)) return Fail(failure);  // it would be refused again
  absl::StatusOr<cl::v1::SessionCapture> session = capture();
  if (!session.ok()) {
    std::cerr << "cl-client: " << what << " could not be delivered (" << failure.message()
              << ") nor spooled: " << session.status().message() << "\n";
    return cl::kExitInternal;
  }
  const std::string dir = cl::SpoolDir(absl::GetFlag(FLAGS_spool));
  absl::StatusOr<std::string> spooled = cl::SpoolCapture(dir, *session);
  LeaveToExit(*std::move(session));
  if (!spooled.ok()) {
    std::cerr << "cl-client: the session could not be delivered (" << failure.message()
              << ") nor spooled: " << spooled.status().message() << "\n";
    return cl::kExitInternal;
  }
  std::cerr << "cl-client: " << server << " did not take the session after "
            << cl::FormatCount(outcome.attempts, "attempt", "attempts") << " ("
            << absl::StatusCodeToString(failure.code()) << ": " << failure.message()
            << "); spooled to " << *spooled
            << " — send it later with: cl-client spool flush --server " << server
            << (dir == cl::SpoolDir("") ? "" : " --spool " + dir) << "\n";
  return cl::kExitUnavailable;
}

// upload: the session to the server, retried until --deadline, else into the spool.
int Upload(const std::string& path) {
  const std::string server = absl::GetFlag(FLAGS_server);
  if (server.empty()) return Usage("upload needs --server HOST:PORT");
  absl::StatusOr<cl::InputOptions> in = ReadInputOptions();
  if (!in.ok()) return Usage(in.status().message());
  absl::StatusOr<cl::v1::Gates> gates = ReadGates();  // before the import: a usage error is cheap
  if (!gates.ok()) return Usage(gates.status().message());
  if (const absl::string_view flag = ComparingGate(*gates); !flag.empty())
    return Usage(absl::StrCat("upload sends one session: ", flag, " has no base to compare with"));
  // The server analyzes the one session: the post-grad graphs' nodes are all its passes read.
  in->import.graph_nodes = cl::GraphNodes::kLoweredOnly;
  cl::v1::AnalyzeOptions options;
  if (cl::HasGates(*gates)) *options.mutable_gates() = *gates;

  if (cl::IsTraceInput(path) && !std::filesystem::is_directory(path) && !in->rank) {
    // A log goes up as it is, imported by the server as it arrives (the import here would only
    // add its time before the first byte is sent), followed by the user files it names, which
    // only this machine has. One that does not open fails here, before any server is asked.
    if (const absl::Status opens =
            cl::ReadMaybeGzipped(path, 1, [](absl::string_view) { return false; });
        !opens.ok()) {
      return Fail(opens);
    }
    const RawLog log = RawLogFor(path, *in);
    cl::UploadOutcome outcome =
        cl::WithRetry(log.remote, UploadPolicy(), [&](const cl::RemoteOptions& attempt) {
          return cl::AnalyzeRemoteTrace(path, log.header, options, attempt, log.sources);
        });
    Progress().Clear();
    return UploadEnded(path, outcome, [&] { return cl::LoadSession(path, *in); });
  }

  absl::StatusOr<cl::v1::SessionCapture> capture = cl::LoadSession(path, *in);
  if (!capture.ok()) return Fail(capture.status());
  cl::AssembledCaptures captures{*std::move(capture), std::nullopt};
  cl::UploadOutcome outcome = cl::AnalyzeWithRetry(
      captures, options, RemoteWithProgress(path, UploadBytes(captures)), UploadPolicy());
  Progress().Clear();
  const int code = UploadEnded(path, outcome, [&] { return std::move(captures.head); });
  LeaveToExit(std::move(captures.head));
  return code;
}

// spool flush | spool list.
int Spool(const std::string& action) {
  const std::string dir = cl::SpoolDir(absl::GetFlag(FLAGS_spool));
  if (action == "list") {
    absl::StatusOr<std::vector<std::string>> files = cl::SpooledFiles(dir);
    if (!files.ok()) return Fail(files.status());
    for (const std::string& f : *files) std::cout << f << "\n";
    return cl::kExitOk;
  }
  if (action != "flush") return Usage("spool takes flush or list");
  const std::string server = absl::GetFlag(FLAGS_server);
  if (server.empty()) return Usage("spool flush needs --server HOST:PORT");
  const cl::FlushResult result = cl::FlushSpool(dir, {}, Remote(), UploadPolicy());
  for (const std::string& e : result.errors) std::cerr << "cl-client: " << e << "\n";
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::cout << "cl-client: " << cl::FormatCount(result.delivered, "session", "sessions")
              << " delivered, " << result.remaining << " left in " << dir << "\n";
  }
  return result.remaining == 0 ? cl::kExitOk : cl::kExitUnavailable;
}

}  // namespace

static int Main(int argc, char** argv) {
  absl::StatusOr<cl::ParsedCommandLine> line = cl::ParseFlags(
      cl::NormalizeCommandLine(std::vector<std::string>(argv, argv + argc)), cl::IsClientFlag);
  if (!line.ok()) {
    // The command, when it came before the mistake, names the help to read.
    for (int i = 1; i < argc; ++i) {
      if (cl::FindCommand(argv[i]) != nullptr) {
        current_command = argv[i];
        break;
      }
      if (argv[i][0] == '-') break;
    }
    return Usage(line.status().message());
  }
  const std::vector<std::string>& args = line->positional;
  if (line->version) {
    std::cout << cl::VersionLine() << "\n";
    return cl::kExitOk;
  }
  if (args.empty() || (args[0] == "help" && args.size() == 1)) {
    if (!line->help && args.empty())
      return Usage("no command (analyze, check, run, import-trace, upload, spool, health)");
    std::cout << cl::OverallHelp();
    return cl::kExitOk;
  }
  const std::string& command = args[0] == "help" ? args[1] : args[0];
  const cl::CommandHelp* help = cl::FindCommand(command);
  if (help == nullptr) {
    std::vector<std::string> names;
    for (const cl::CommandHelp& c : cl::Commands()) names.push_back(c.name);
    const std::string close = cl::ClosestName(command, names);
    return Usage(absl::StrCat("unknown command \"", command, "\"",
                              close.empty() ? "" : absl::StrCat("; did you mean ", close, "?"),
                              " (", absl::StrJoin(names, ", "), ")"));
  }
  current_command = command;
  if (args[0] == "help" || line->help) {
    if (args[0] == "help" && args.size() > 2) return Usage("help takes one command");
    std::cout << cl::CommandUsage(*help);
    return cl::kExitOk;
  }
  for (const std::string& flag : line->flags) {
    if (std::find(help->flags.begin(), help->flags.end(), flag) == help->flags.end()) {
      std::string spelled = flag;
      std::replace(spelled.begin(), spelled.end(), '_', '-');
      return Usage(absl::StrCat(command, " does not take --", spelled));
    }
  }
  const std::vector<std::string> operands(args.begin() + 1, args.end());
  // 2 MiB pages only where the kernel has free blocks for what is read (client/huge_pages.h).
  if (command == "analyze" || command == "check" || command == "import-trace" ||
      command == "upload") {
    std::vector<std::string> inputs = operands;
    if (command == "analyze" || command == "check") {
      if (const std::string base = absl::GetFlag(FLAGS_base); !base.empty()) inputs.push_back(base);
    }
    cl::FitHugePagesTo(inputs);
  } else if (command == "spool") {
    cl::FitHugePagesTo({cl::SpoolDir(absl::GetFlag(FLAGS_spool))});
  }
  if (command == "analyze") {
    if (operands.size() != 1) return Usage("analyze takes one capture, log or directory");
    return Analyze(operands[0], {});
  }
  if (command == "check") {
    if (operands.size() != 1) return Usage("check takes one capture, log or directory");
    return Check(operands[0]);
  }
  if (command == "run") {
    // Everything after `--` is the command; nothing may come between `run` and `--`.
    if (!line->after_dashes || *line->after_dashes != 1 || args.size() < 2)
      return Usage("run takes the command after --: cl-client run [flags] -- CMD ARGS...");
    return RunCommand(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (command == "import-trace") {
    if (operands.size() != 1) return Usage("import-trace takes one log file or directory");
    return ImportTrace(operands[0]);
  }
  if (command == "upload") {
    if (operands.size() != 1) return Usage("upload takes one capture, log or directory");
    return Upload(operands[0]);
  }
  if (command == "spool") {
    if (operands.size() != 1) return Usage("spool takes flush or list");
    return Spool(operands[0]);
  }
  // health
  if (!operands.empty()) return Usage("health takes no arguments");
  const std::string server = absl::GetFlag(FLAGS_server);
  if (server.empty()) return Usage("health needs --server HOST:PORT");
  const absl::Status s = cl::CheckHealth(Remote(), "");
  if (!s.ok()) return Fail(s);
  std::cout << server << ": SERVING\n";
  return cl::kExitOk;
}

int main(int argc, char** argv) {
  const int code = Main(argc, argv);
#ifdef NDEBUG
  // A command's work is done and its files are written and closed: what is left are the static
  // objects' destructors and the heap's teardown, a few percent of a run on a small log, for
  // memory the process is about to give back whole. Test and sanitizer builds (no NDEBUG) exit
  // the usual way, so that leak checks still run.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  _exit(code);
#else
  return code;
#endif
}
