#include "service/render/site_model.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace cl {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The report's sections that can name a compile, by their field in AnalysisReport.
constexpr std::pair<absl::string_view, SectionRef> kSections[] = {
    {"failures", {"failures", "Failures"}},
    {"ranks", {"ranks", "Ranks"}},
    {"ir_diff", {"ir-diff", "IR Diff"}},
    {"recompile", {"recompile", "Recompile summary"}},
    {"cache_stability", {"cache-stability", "Cache stability"}},
    {"divergence", {"divergence", "Divergence"}},
    {"lint", {"lint", "Lint"}},
    {"fusion", {"fusion", "Fusion opportunities"}},
    {"roofline", {"roofline", "Roofline"}},
};

// Every string a message holds, at any depth.
void VisitStrings(const Message& m, absl::FunctionRef<void(const std::string&)> visit) {
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  std::string scratch;
  for (const FieldDescriptor* f : fields) {
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(m, f); ++i)
          visit(r->GetRepeatedStringReference(m, f, i, &scratch));
      } else {
        visit(r->GetStringReference(m, f, &scratch));
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_map()) continue;  // labels: no compile ids
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(m, f); ++i)
          VisitStrings(r->GetRepeatedMessage(m, f, i), visit);
      } else {
        VisitStrings(r->GetMessage(m, f), visit);
      }
    }
  }
}

// The compiles each section names: by id ("0/1"), by one of their graphs' ids, or by a kernel
// of one of their graphs.
void FindMentions(const v1::SessionCapture& capture, const v1::AnalysisReport& report,
                  SiteModel& model) {
  absl::flat_hash_map<absl::string_view, int> named;  // a compile's id, graph ids, kernel names
  for (const auto& [id, index] : model.by_id) named.emplace(id, index);
  for (const v1::Graph& g : capture.graphs()) {
    if (auto it = model.by_id.find(g.compile_id()); it != model.by_id.end())
      named.emplace(g.id(), it->second);
  }
  for (const v1::Kernel& k : capture.kernels()) {
    // The index is copied out first: the emplace may grow `named` under the iterator.
    if (auto it = named.find(k.graph_id()); it != named.end()) {
      const int index = it->second;
      named.emplace(k.name(), index);
    }
  }
  const google::protobuf::Descriptor* d = report.GetDescriptor();
  for (const auto& [field_name, section] : kSections) {
    const FieldDescriptor* f = d->FindFieldByName(std::string(field_name));
    if (f == nullptr || !report.GetReflection()->HasField(report, f)) continue;
    absl::flat_hash_set<int> seen;
    // clang 14 cannot capture a structured binding; name the section for the lambda.
    const auto& mention = section;
    VisitStrings(report.GetReflection()->GetMessage(report, f), [&](const std::string& s) {
      auto it = named.find(s);
      if (it != named.end() && seen.insert(it->second).second)
        model.compiles[it->second].mentioned_in.push_back(mention);
    });
  }
}

}  // namespace

std::string CompilePageStem(const v1::Compile& compile, const v1::Frame* frame) {
  const absl::string_view id = compile.id();
  if (frame != nullptr && frame->no_frame())
    return absl::StrCat("noid_", compile.frame_compile_id());
  std::string stem;
  // "!3/0/1": compiled autograd graph 3.
  if (id.size() > 1 && id[0] == '!') {
    uint32_t ca = 0;
    if (absl::SimpleAtoi(id.substr(1, id.find('/') - 1), &ca))
      absl::StrAppend(&stem, "ca", ca, "_");
  }
  const uint32_t torch_frame =
      frame != nullptr && frame->reset_round() > 0 ? frame->torch_id() : compile.frame_id();
  absl::StrAppend(&stem, torch_frame, "_", compile.frame_compile_id(), "_", compile.attempt());
  if (frame != nullptr && frame->reset_round() > 0)
    absl::StrAppend(&stem, ".r", frame->reset_round());
  return stem;
}

SiteModel BuildSiteModel(const v1::SessionCapture& capture, const v1::AnalysisReport& report) {
  SiteModel model;
  absl::flat_hash_map<uint32_t, const v1::Frame*> frames;
  for (const v1::Frame& f : capture.frames()) frames.emplace(f.id(), &f);
  absl::flat_hash_set<std::string> pages;
  absl::flat_hash_map<uint32_t, int> last_of_frame;  // frame id -> its latest compile so far
  model.compiles.resize(capture.compiles_size());
  for (int i = 0; i < capture.compiles_size(); ++i) {
    const v1::Compile& c = capture.compiles(i);
    model.by_id.emplace(c.id(), i);
    auto frame = frames.find(c.frame_id());
    const std::string stem = CompilePageStem(c, frame == frames.end() ? nullptr : frame->second);
    std::string page = absl::StrCat("compiles/", stem, ".html");
    for (int n = 2; !pages.insert(page).second; ++n)
      page = absl::StrCat("compiles/", stem, "-", n, ".html");
    model.compiles[i].page = std::move(page);
    // A later compile of the frame with recompile reasons is the one the previous entry's guards
    // sent there.
    if (auto last = last_of_frame.find(c.frame_id());
        last != last_of_frame.end() && !c.recompile_reasons().empty()) {
      model.compiles[last->second].recompiled_by = i;
    }
    last_of_frame[c.frame_id()] = i;
  }
  for (int i = 0; i < capture.records_size(); ++i) {
    auto it = model.by_id.find(capture.records(i).compile_id());
    if (it == model.by_id.end()) {
      model.unowned_records.push_back(i);
    } else {
      model.compiles[it->second].records.push_back(i);
    }
  }
  for (const v1::SourceFile& f : capture.sources()) {
    SiteModel::Source& source = model.sources[f.path()];
    source.text = f.text();
    source.line_starts.push_back(0);
    for (size_t at = 0; (at = source.text.find('\n', at)) != absl::string_view::npos; ++at)
      source.line_starts.push_back(at + 1);
  }
  FindMentions(capture, report, model);
  for (const v1::CompileTime& row : report.compile_time().compiles()) {
    if (auto it = model.by_id.find(row.id()); it != model.by_id.end())
      model.compiles[it->second].compile_time = &row;
  }
  return model;
}

std::optional<absl::string_view> SourceLine(const SiteModel& model, absl::string_view file,
                                            uint32_t line) {
  auto it = model.sources.find(file);
  if (it == model.sources.end() || line == 0 || line > it->second.line_starts.size())
    return std::nullopt;
  const absl::string_view text = it->second.text;
  const size_t at = it->second.line_starts[line - 1];
  const size_t end = text.find('\n', at);
  return text.substr(at, end == absl::string_view::npos ? absl::string_view::npos : end - at);
}

}  // namespace cl
