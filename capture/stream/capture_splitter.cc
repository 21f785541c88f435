#include "capture/stream/capture_splitter.h"

#include <algorithm>
#include <string>

#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "common/utf8.h"

namespace cl {
namespace {

// Room left in a part for the envelope around a payload (side tag, field tags, lengths).
constexpr size_t kEnvelope = 64;

class Splitter {
 public:
  Splitter(v1::Side side, size_t budget, absl::FunctionRef<absl::Status(v1::CapturePart&&)> emit)
      : side_(side), budget_(std::clamp<size_t>(budget, 1024, kMaxPartBudget)), emit_(emit) {}

  // Sends `part`, or its bytes as fragments when it is over the budget.
  absl::Status Send(v1::CapturePart part) {
    part.set_side(side_);
    if (part.ByteSizeLong() <= budget_) return emit_(std::move(part));
    const std::string kind(
        part.GetDescriptor()->FindFieldByNumber(static_cast<int>(part.part_case()))->name());
    std::string bytes;
    const google::protobuf::Message& item =
        part.GetReflection()->GetMessage(part, part.GetDescriptor()->FindFieldByName(kind));
    if (!item.SerializeToString(&bytes))
      return absl::InternalError("capture part does not serialize");
    const size_t piece = budget_ - kEnvelope - kind.size();
    for (size_t at = 0; at < bytes.size(); at += piece) {
      v1::CapturePart fragment;
      fragment.set_side(side_);
      v1::Fragment* f = fragment.mutable_fragment();
      f->set_kind(kind);
      f->set_data(bytes.substr(at, piece));
      f->set_last(at + piece >= bytes.size());
      CL_RETURN_IF_ERROR(emit_(std::move(fragment)));
    }
    return absl::OkStatus();
  }

  absl::Status SendGraph(const v1::Graph& graph) {
    v1::CapturePart header;
    v1::GraphHeader* h = header.mutable_graph_header();
    h->set_id(graph.id());
    h->set_compile_id(graph.compile_id());
    h->set_stage(graph.stage());
    CL_RETURN_IF_ERROR(Send(std::move(header)));

    v1::CapturePart batch;
    size_t size = kEnvelope + graph.id().size();
    for (const v1::Node& node : graph.nodes()) {
      const size_t node_size = node.ByteSizeLong() + 8;
      if (batch.node_batch().nodes_size() > 0 && size + node_size > budget_) {
        CL_RETURN_IF_ERROR(Send(std::move(batch)));
        batch = v1::CapturePart();
        size = kEnvelope + graph.id().size();
      }
      if (!batch.has_node_batch()) batch.mutable_node_batch()->set_graph_id(graph.id());
      *batch.mutable_node_batch()->add_nodes() = node;
      size += node_size;
    }
    if (batch.has_node_batch()) CL_RETURN_IF_ERROR(Send(std::move(batch)));
    return absl::OkStatus();
  }

  // Source text goes in pieces cut on UTF-8 character boundaries (each piece must be valid UTF-8).
  absl::Status SendSource(const v1::SourceFile& source) {
    const absl::string_view text = source.text();
    const size_t piece = budget_ - kEnvelope - source.path().size() - source.sha256().size();
    size_t at = 0;
    do {
      size_t end = at + Utf8Prefix(text.substr(at), piece).size();
      if (end == at) end = std::min(text.size(), at + piece);  // a piece too small for a character
      v1::CapturePart part;
      v1::SourceChunk* chunk = part.mutable_source_chunk();
      chunk->set_path(source.path());
      if (at == 0) chunk->set_sha256(source.sha256());
      chunk->set_text(std::string(text.substr(at, end - at)));
      chunk->set_last(end >= text.size());
      CL_RETURN_IF_ERROR(Send(std::move(part)));
      at = end;
    } while (at < text.size());
    return absl::OkStatus();
  }

 private:
  const v1::Side side_;
  const size_t budget_;
  absl::FunctionRef<absl::Status(v1::CapturePart&&)> emit_;
};

}  // namespace

absl::Status SplitCapture(const v1::SessionCapture& capture, v1::Side side, size_t part_budget,
                          absl::FunctionRef<absl::Status(v1::CapturePart&&)> emit) {
  Splitter s(side, part_budget, emit);
  v1::CapturePart header;
  header.mutable_header()->set_schema(capture.schema());
  *header.mutable_header()->mutable_session() = capture.session();
  CL_RETURN_IF_ERROR(s.Send(std::move(header)));

  auto send_each = [&s](const auto& items, auto mutable_item) -> absl::Status {
    for (const auto& item : items) {
      v1::CapturePart part;
      *(part.*mutable_item)() = item;
      CL_RETURN_IF_ERROR(s.Send(std::move(part)));
    }
    return absl::OkStatus();
  };
  CL_RETURN_IF_ERROR(send_each(capture.frames(), &v1::CapturePart::mutable_frame));
  CL_RETURN_IF_ERROR(send_each(capture.compiles(), &v1::CapturePart::mutable_compile));
  for (const v1::Graph& graph : capture.graphs()) CL_RETURN_IF_ERROR(s.SendGraph(graph));
  CL_RETURN_IF_ERROR(send_each(capture.iterations(), &v1::CapturePart::mutable_iteration));
  if (capture.has_divergence()) {
    v1::CapturePart part;
    *part.mutable_divergence() = capture.divergence();
    CL_RETURN_IF_ERROR(s.Send(std::move(part)));
  }
  for (const v1::SourceFile& source : capture.sources()) CL_RETURN_IF_ERROR(s.SendSource(source));
  CL_RETURN_IF_ERROR(send_each(capture.kernels(), &v1::CapturePart::mutable_kernel));
  CL_RETURN_IF_ERROR(send_each(capture.extras(), &v1::CapturePart::mutable_extra));
  CL_RETURN_IF_ERROR(send_each(capture.diagnostics(), &v1::CapturePart::mutable_diagnostic));
  CL_RETURN_IF_ERROR(send_each(capture.ranks(), &v1::CapturePart::mutable_rank_digest));
  CL_RETURN_IF_ERROR(send_each(capture.records(), &v1::CapturePart::mutable_record));
  CL_RETURN_IF_ERROR(send_each(capture.export_issues(), &v1::CapturePart::mutable_export_issue));
  CL_RETURN_IF_ERROR(send_each(capture.export_symbols(), &v1::CapturePart::mutable_export_symbol));
  return absl::OkStatus();
}

absl::Status SplitSource(const v1::SourceFile& source, v1::Side side, size_t part_budget,
                         absl::FunctionRef<absl::Status(v1::CapturePart&&)> emit) {
  return Splitter(side, part_budget, emit).SendSource(source);
}

}  // namespace cl
