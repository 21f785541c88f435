#include "service/render/trace_events.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/proto_json.h"
#include "google/protobuf/struct.pb.h"
#include "service/render/struct_json.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using google::protobuf::Struct;

// One complete event on rank `pid`'s compile thread.
void AddComplete(const std::string& name, const char* category, int64_t begin, int64_t end, int pid,
                 const Struct& args, google::protobuf::ListValue* events) {
  Struct* e = events->add_values()->mutable_struct_value();
  auto& f = *e->mutable_fields();
  f["name"] = JsonString(name);
  f["cat"] = JsonString(category);
  f["ph"] = JsonString("X");
  f["ts"] = JsonNumber(static_cast<double>(begin));
  // As doubles: end - begin of a hostile capture's times could overflow an int64.
  f["dur"] = JsonNumber(std::max(0.0, static_cast<double>(end) - static_cast<double>(begin)));
  f["pid"] = JsonNumber(pid);
  f["tid"] = JsonNumber(0);
  *f["args"].mutable_struct_value() = args;
}

void AddMetadata(const char* name, int pid, const std::string& value,
                 google::protobuf::ListValue* events) {
  Struct* e = events->add_values()->mutable_struct_value();
  auto& f = *e->mutable_fields();
  f["name"] = JsonString(name);
  f["ph"] = JsonString("M");
  f["ts"] = JsonNumber(0);
  f["pid"] = JsonNumber(pid);
  f["tid"] = JsonNumber(0);
  (*f["args"].mutable_struct_value()->mutable_fields())["name"] = JsonString(value);
}

}  // namespace

absl::StatusOr<std::string> RenderTraceEvents(
    const std::vector<const v1::SessionCapture*>& captures) {
  Struct root;
  google::protobuf::ListValue* events =
      (*root.mutable_fields())["traceEvents"].mutable_list_value();
  for (const v1::SessionCapture* capture : captures) {
    const int pid = capture->session().rank();
    AddMetadata("process_name", pid, absl::StrCat("rank ", pid), events);
    AddMetadata("thread_name", pid, "torch.compile", events);
    absl::flat_hash_map<uint32_t, std::string> frame_names;  // ids are a capture's: any uint32
    for (const v1::Frame& f : capture->frames()) frame_names[f.id()] = f.name();
    for (const v1::Compile& c : capture->compiles()) {
      auto named = frame_names.find(c.frame_id());
      const std::string frame = named == frame_names.end() ? "" : named->second;
      Struct args;
      (*args.mutable_fields())["compile_id"] = JsonString(c.id());
      (*args.mutable_fields())["frame"] = JsonString(frame);
      // The compile spans its own start and duration and every phase pair inside it.
      int64_t begin = std::numeric_limits<int64_t>::max(), end = 0;
      if (c.start_us() > 0) {
        begin = c.start_us();
        // Saturated: a hostile capture's duration must not overflow the end.
        const int64_t duration = std::max<int64_t>(0, c.duration_us());
        end = begin > std::numeric_limits<int64_t>::max() - duration
                  ? std::numeric_limits<int64_t>::max()
                  : begin + duration;
      }
      for (const v1::Phase& p : c.phases()) {
        for (int i = 0; i + 1 < p.spans_us_size(); i += 2) {
          begin = std::min(begin, p.spans_us(i));
          end = std::max(end, p.spans_us(i + 1));
        }
      }
      if (end == 0 || begin > end) continue;
      AddComplete(absl::StrCat("compile ", c.id(), frame.empty() ? "" : " ", frame), "compile",
                  begin, end, pid, args, events);
      for (const v1::Phase& p : c.phases()) {
        for (int i = 0; i + 1 < p.spans_us_size(); i += 2)
          AddComplete(p.name(), "phase", p.spans_us(i), p.spans_us(i + 1), pid, args, events);
      }
    }
  }
  (*root.mutable_fields())["displayTimeUnit"] = JsonString("ms");
  return ToDeterministicJson(root, {});
}

}  // namespace cl
