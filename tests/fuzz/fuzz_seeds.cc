// Builds the fuzz targets' seed corpora from real inputs (make_corpora.sh drives it). Not a fuzz
// target: a plain tool, so that each target's corpus holds what that target reads, cut from the
// fixtures the way the target's input is framed.
//
//   fuzz_seeds trace LOG CORPORA NAME     a TORCH_TRACE log → small runs of records (importer,
//                                         tokenizer), FX graph payloads, guard trees, recompile
//                                         reasons, compile_lens records, and its capture
//   fuzz_seeds capture FILE CORPORA NAME  a .cls.json → a shrunk .cls.json, .cls.pb, part stream
//
// Every seed stays under kMaxSeed bytes: libFuzzer mutates small inputs far faster.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "capture/capture_io.h"
#include "capture/stream/capture_splitter.h"
#include "capture/torch_trace/importer.h"
#include "capture/torch_trace/tokenizer.h"
#include "capture/validate.h"
#include "common/file_io.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "simdjson.h"

namespace {

namespace v1 = ::compile_lens::v1;

constexpr size_t kMaxSeed = 60 * 1024;
constexpr size_t kMaxSeedsPerKind = 24;  // per log: spread over the log, not its first records

std::string g_corpora;
std::string g_name;

void Write(const std::string& target, const std::string& suffix, absl::string_view bytes) {
  const std::string dir = absl::StrCat(g_corpora, "/", target);
  const std::string path = absl::StrCat(dir, "/", g_name, "-", suffix);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::fprintf(stderr, "fuzz_seeds: cannot write %s\n", path.c_str());
}

// Keeps every n-th of `items` so that at most kMaxSeedsPerKind remain, spread over the input.
std::vector<std::string> Spread(std::vector<std::string> items) {
  if (items.size() <= kMaxSeedsPerKind) return items;
  std::vector<std::string> out;
  for (size_t i = 0; i < kMaxSeedsPerKind; ++i)
    out.push_back(std::move(items[i * items.size() / kMaxSeedsPerKind]));
  return out;
}

std::string Cut(absl::string_view s) { return std::string(s.substr(0, kMaxSeed)); }

// Removes the tail half of the longest repeated field (anywhere in the message) while the capture
// still validates, until its JSON is under the seed size. A field whose cut breaks validation
// (a reference into it) is left alone from then on, wherever it appears.
void Shrink(v1::SessionCapture* capture) {
  using google::protobuf::FieldDescriptor;
  using google::protobuf::Message;
  std::set<std::string> frozen;
  for (int round = 0; round < 200; ++round) {
    auto json = cl::CaptureToJson(*capture);
    if (!json.ok() || json->size() < kMaxSeed) return;
    Message* best = nullptr;
    const FieldDescriptor* best_field = nullptr;
    int best_size = 1;
    std::function<void(Message*)> visit = [&](Message* m) {
      const auto* refl = m->GetReflection();
      std::vector<const FieldDescriptor*> fields;
      refl->ListFields(*m, &fields);
      for (const FieldDescriptor* f : fields) {
        if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
        if (f->is_repeated()) {
          const int n = refl->FieldSize(*m, f);
          if (!frozen.contains(f->full_name()) && n > best_size)
            best = m, best_field = f, best_size = n;
          for (int i = 0; i < n; ++i) visit(refl->MutableRepeatedMessage(m, f, i));
        } else {
          visit(refl->MutableMessage(m, f));
        }
      }
    };
    visit(capture);
    if (best == nullptr) return;
    const v1::SessionCapture before = *capture;
    const std::string field_name = best_field->full_name();
    for (int i = best_size / 2; i < best_size; ++i)
      best->GetReflection()->RemoveLast(best, best_field);
    if (!cl::ValidateCapture(*capture).ok()) {
      *capture = before;
      frozen.insert(field_name);
    }
  }
}

// The capture stream target's input: each part as a 2-byte little-endian length and its bytes.
std::string PartStream(const v1::SessionCapture& capture, v1::Side side) {
  std::string out;
  (void)cl::SplitCapture(capture, side, 4096, [&](v1::CapturePart&& part) {
    const std::string bytes = part.SerializeAsString();
    if (bytes.size() > 0xffff) return absl::OkStatus();
    out.push_back(static_cast<char>(bytes.size() & 0xff));
    out.push_back(static_cast<char>(bytes.size() >> 8));
    out += bytes;
    return absl::OkStatus();
  });
  return out;
}

void WriteCapture(v1::SessionCapture capture, const std::string& suffix) {
  Shrink(&capture);
  if (!cl::ValidateCapture(capture).ok()) return;
  if (auto json = cl::CaptureToJson(capture); json.ok() && json->size() < 4 * kMaxSeed) {
    Write("capture_json_fuzz", suffix + ".cls.json", *json);
  }
  std::string pb;
  if (capture.SerializeToString(&pb) && pb.size() < 4 * kMaxSeed)
    Write("capture_pb_fuzz", suffix + ".cls.pb", pb);
  if (std::string s = PartStream(capture, v1::HEAD); s.size() < 4 * kMaxSeed) {
    Write("capture_stream_fuzz", suffix + "-head.parts", s);
  }
}

// Raw TORCH_TRACE record runs: a record is its header line and the tab lines after it.
std::vector<std::string> RecordRuns(absl::string_view log) {
  std::vector<std::string> records;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (line.empty()) continue;
    if (line[0] == '\t' && !records.empty()) {
      if (records.back().size() + line.size() < kMaxSeed)
        absl::StrAppend(&records.back(), line, "\n");
    } else {
      records.push_back(absl::StrCat(line, "\n"));
    }
  }
  std::vector<std::string> runs;
  std::string run;
  int in_run = 0;
  for (std::string& r : records) {
    if (in_run == 4 || (in_run > 0 && run.size() + r.size() > kMaxSeed)) {
      runs.push_back(std::move(run));
      run.clear();
      in_run = 0;
    }
    run += r;
    ++in_run;
  }
  if (!run.empty()) runs.push_back(std::move(run));
  return runs;
}

int Trace(const std::string& path) {
  auto log = cl::ReadFile(path);
  if (!log.ok()) {
    std::fprintf(stderr, "fuzz_seeds: %s\n", std::string(log.status().message()).c_str());
    return 1;
  }
  const std::vector<std::string> runs = Spread(RecordRuns(*log));
  for (size_t i = 0; i < runs.size(); ++i) {
    Write("torch_trace_fuzz", absl::StrCat("run", i, ".log"), runs[i]);
    Write("torch_trace_tokenizer_fuzz", absl::StrCat("run", i, ".log"), runs[i]);
  }

  std::vector<std::string> graphs, guards, reasons, lens;
  simdjson::dom::parser parser;
  cl::TraceTokenizer tokenizer;
  auto sink = [&](cl::TraceRecord&& r) {
    simdjson::dom::object root;
    if (parser.parse(r.metadata).get(root) != simdjson::SUCCESS) return;
    for (auto [key, value] : root) {
      const std::string k(key);
      std::string name = k;
      if (k == "artifact") {
        std::string_view n;
        if (value["name"].get(n) == simdjson::SUCCESS) name = std::string(n);
      }
      if (absl::EndsWith(name, "_graph") && r.has_payload) graphs.push_back(Cut(r.payload));
      if (name == "dynamo_cpp_guards_str" && r.has_payload) guards.push_back(Cut(r.payload));
      if (absl::StartsWith(name, "compile_lens_") && r.has_payload) {
        const char kind = name == "compile_lens_iteration"    ? 'i'
                          : name == "compile_lens_divergence" ? 'd'
                                                              : 's';
        lens.push_back(Cut(absl::StrCat(std::string(1, kind), r.payload)));
      }
      if (name == "recompile_reasons" && r.has_payload) {
        simdjson::dom::parser p;
        simdjson::dom::array items;
        if (p.parse(r.payload).get(items) == simdjson::SUCCESS) {
          for (auto item : items) {
            std::string_view s;
            if (item.get(s) == simdjson::SUCCESS) reasons.emplace_back(s);
            simdjson::dom::array inner;  // the oldest form: a list of lists
            if (item.get(inner) == simdjson::SUCCESS) {
              for (auto x : inner) {
                if (x.get(s) == simdjson::SUCCESS) reasons.emplace_back(s);
              }
            }
          }
        }
      }
      if (k == "compilation_metrics") {
        std::string_view s;
        if (value["recompile_reason"].get(s) == simdjson::SUCCESS && !s.empty())
          reasons.emplace_back(s);
        if (value["fail_reason"].get(s) == simdjson::SUCCESS && !s.empty()) reasons.emplace_back(s);
      }
      break;  // the event is the first key
    }
  };
  tokenizer.Feed(*log, sink);
  tokenizer.Finish(sink);
  auto write_all = [](const char* target, const std::vector<std::string>& items, const char* ext) {
    const std::vector<std::string> kept = Spread(items);
    for (size_t i = 0; i < kept.size(); ++i) Write(target, absl::StrCat(i, ext), kept[i]);
  };
  write_all("fx_graph_fuzz", graphs, ".fx");
  write_all("guard_tree_fuzz", guards, ".guards");
  write_all("recompile_reason_fuzz", reasons, ".txt");
  write_all("lens_records_fuzz", lens, ".json");

  cl::TraceImporter importer;
  importer.Feed(*log);
  WriteCapture(importer.Finish(), "import");
  return 0;
}

int Capture(const std::string& path) {
  auto capture = cl::ReadCaptureFile(path);
  if (!capture.ok()) {
    std::fprintf(stderr, "fuzz_seeds: %s\n", std::string(capture.status().message()).c_str());
    return 1;
  }
  WriteCapture(*capture, "capture");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 || (std::strcmp(argv[1], "trace") != 0 && std::strcmp(argv[1], "capture") != 0)) {
    std::fprintf(stderr, "usage: fuzz_seeds trace|capture FILE CORPORA_DIR NAME\n");
    return 2;
  }
  g_corpora = argv[3];
  g_name = argv[4];
  return std::strcmp(argv[1], "trace") == 0 ? Trace(argv[2]) : Capture(argv[2]);
}
