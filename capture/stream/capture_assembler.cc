#include "capture/stream/capture_assembler.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/schema.h"
#include "capture/validate.h"
#include "common/status_macros.h"

namespace cl {
namespace {

absl::string_view SideName(v1::Side side) { return side == v1::BASE ? "base" : "head"; }

absl::string_view PartName(const v1::CapturePart& part) {
  if (part.part_case() == v1::CapturePart::PART_NOT_SET) return "empty part";
  return part.GetDescriptor()->FindFieldByNumber(static_cast<int>(part.part_case()))->name();
}

// "part 3 (head frame)": how errors name a part, by its index in the stream.
std::string PartWhere(uint64_t index, const v1::CapturePart& part) {
  return absl::StrCat("part ", index, " (", SideName(part.side()), " ", PartName(part), ")");
}

}  // namespace

CaptureAssembler::CaptureAssembler(uint64_t max_bytes, google::protobuf::Arena* arena,
                                   uint64_t max_memory)
    : max_bytes_(max_bytes),
      arena_(arena),
      max_memory_(max_memory),
      head_(NewSide()),
      base_(NewSide()) {}

CaptureAssembler::SideState CaptureAssembler::NewSide() {
  SideState side;
  if (arena_ != nullptr) {
    side.capture = google::protobuf::Arena::CreateMessage<v1::SessionCapture>(arena_);
  } else {
    side.owned = std::make_unique<v1::SessionCapture>();
    side.capture = side.owned.get();
  }
  return side;
}

absl::Status CaptureAssembler::Add(v1::CapturePart&& part) {
  CL_RETURN_IF_ERROR(CountBytes(part.ByteSizeLong(), [&] { return PartWhere(parts_, part); }));
  return AddCounted(std::move(part));
}

absl::Status CaptureAssembler::CountBytes(uint64_t bytes, absl::FunctionRef<std::string()> what) {
  bytes_ += bytes;
  if (bytes_ > max_bytes_) {
    return absl::ResourceExhaustedError(absl::StrCat(what(),
                                                     ": the capture is over the session limit of ",
                                                     max_bytes_, " bytes (max_session_bytes)"));
  }
  return absl::OkStatus();
}

absl::Status CaptureAssembler::AddCountedTorchTrace(v1::Side side,
                                                    absl::Span<const absl::string_view> pieces) {
  v1::CapturePart part;
  part.set_side(side);
  // The part's kind, for the checks and the messages; its bytes are `pieces`.
  part.set_torch_trace("");
  return AddPart(std::move(part), pieces);
}

absl::Status CaptureAssembler::AddPart(v1::CapturePart&& part,
                                       absl::Span<const absl::string_view> raw) {
  const uint64_t index = parts_++;
  if (part.side() != v1::HEAD && part.side() != v1::BASE) {
    return absl::InvalidArgumentError(
        absl::StrCat(PartWhere(index, part), ": side must be HEAD or BASE"));
  }
  SideState& side = part.side() == v1::BASE ? base_ : head_;
  absl::Status status = Apply(side, part, raw);
  // Named only when something is wrong: this runs for every part of every upload.
  if (!status.ok())
    return absl::Status(status.code(),
                        absl::StrCat(PartWhere(index, part), ": ", status.message()));
  return absl::OkStatus();
}

absl::Status CaptureAssembler::AddCountedMessage(v1::AnalyzeChunk& chunk, uint64_t message) {
  if (chunk.kind_case() == v1::AnalyzeChunk::kPart)
    return AddCounted(std::move(*chunk.mutable_part()));
  if (chunk.kind_case() != v1::AnalyzeChunk::kParts) {
    return absl::InvalidArgumentError(absl::StrCat("message ", message, " carries no parts"));
  }
  if (chunk.parts().parts().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("message ", message, " is an empty batch of parts"));
  }
  for (v1::CapturePart& part : *chunk.mutable_parts()->mutable_parts())
    CL_RETURN_IF_ERROR(AddCounted(std::move(part)));
  return absl::OkStatus();
}

absl::Status CaptureAssembler::Apply(SideState& side, v1::CapturePart& part,
                                     absl::Span<const absl::string_view> raw) {
  // A side imported with the post-grad graphs' nodes only cannot be compared: refused at the first
  // part that makes the stream a comparison, before the other side is imported for nothing.
  const bool flags_it =
      part.part_case() == v1::CapturePart::kHeader && part.header().post_grad_nodes_only();
  if (head_.post_grad_nodes_only || base_.post_grad_nodes_only || flags_it) {
    const bool comparison = &side == &base_ || base_.has_header || base_.trace != nullptr;
    if (comparison) {
      return absl::InvalidArgumentError(absl::StrCat(
          head_.post_grad_nodes_only || (flags_it && &side == &head_) ? "head" : "base",
          ": header.post_grad_nodes_only imports the log without the nodes of all but its "
          "post-grad graphs, which a comparison with a base diffs; send it without the flag"));
    }
  }
  if (part.part_case() == v1::CapturePart::kFragment) return ApplyFragment(side, part.fragment());
  if (!side.fragment_kind.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a fragmented ", side.fragment_kind, " was still arriving"));
  }
  if (part.part_case() != v1::CapturePart::kSourceChunk && !side.source_path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("source \"", side.source_path,
                                                   "\" was still arriving (no piece marked last)"));
  }
  if (part.part_case() == v1::CapturePart::kHeader) {
    if (side.has_header) return absl::InvalidArgumentError("a second header for the same side");
    if (side.trace != nullptr)
      return absl::InvalidArgumentError("the header must come before the side's trace bytes");
    side.has_header = true;
    side.source_name = part.header().source_name();
    side.post_grad_nodes_only = part.header().post_grad_nodes_only();
    side.capture->set_schema(part.header().schema());
    *side.capture->mutable_session() = std::move(*part.mutable_header()->mutable_session());
    return CheckSchema(side.capture->schema());
  }
  if (part.part_case() == v1::CapturePart::kTorchTrace) {
    if (side.typed) {
      return absl::InvalidArgumentError(
          "a side carries typed parts or raw TORCH_TRACE bytes, not both");
    }
    if (side.trace == nullptr) {
      TraceParseOptions options;
      options.source_name = side.source_name.empty()
                                ? std::string(SideName(&side == &base_ ? v1::BASE : v1::HEAD))
                                : side.source_name;
      options.memory_budget = max_memory_;
      options.keep_record_texts = keep_record_texts_;
      if (side.post_grad_nodes_only) {
        options.graph_nodes = GraphNodes::kLoweredOnly;
        if (&side == &head_) options.lowered_sink = lowered_sink_;
      }
      side.trace = std::make_unique<TraceImporter>(options);
    }
    if (raw.empty()) side.trace->Feed(part.torch_trace());
    for (absl::string_view piece : raw) side.trace->Feed(piece);
    if (absl::Status refused = side.trace->Refusal(); !refused.ok()) {
      const bool over_budget = absl::IsResourceExhausted(refused);
      return absl::Status(
          over_budget ? refused.code() : absl::StatusCode::kInvalidArgument,
          absl::StrCat(side.source_name.empty() ? "the log" : side.source_name, ": ",
                       refused.message(), over_budget ? " (max_session_memory)" : ""));
    }
    return absl::OkStatus();
  }
  if (side.trace != nullptr) {
    // The files the client offers for the log's stacks (kept at Finish if the session names them).
    if (part.part_case() == v1::CapturePart::kSourceChunk)
      return ApplySourceChunk(side, *part.mutable_source_chunk());
    return absl::InvalidArgumentError(
        "a side carries typed parts or raw TORCH_TRACE bytes, not both (after the bytes, only "
        "source_chunk parts)");
  }
  if (!side.has_header)
    return absl::InvalidArgumentError("the header must be the first part of a side");
  side.typed = true;

  v1::SessionCapture& c = *side.capture;
  switch (part.part_case()) {
    case v1::CapturePart::kFrame:
      *c.add_frames() = std::move(*part.mutable_frame());
      return absl::OkStatus();
    case v1::CapturePart::kCompile:
      *c.add_compiles() = std::move(*part.mutable_compile());
      return absl::OkStatus();
    case v1::CapturePart::kGraphHeader: {
      const v1::GraphHeader& h = part.graph_header();
      if (h.id().empty()) return absl::InvalidArgumentError("graph_header.id is empty");
      if (!side.graph_index.emplace(h.id(), c.graphs_size()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph \"", h.id(), "\" was announced twice"));
      }
      v1::Graph* g = c.add_graphs();
      g->set_id(h.id());
      g->set_compile_id(h.compile_id());
      g->set_stage(h.stage());
      return absl::OkStatus();
    }
    case v1::CapturePart::kNodeBatch: {
      auto it = side.graph_index.find(part.node_batch().graph_id());
      if (it == side.graph_index.end()) {
        return absl::InvalidArgumentError(absl::StrCat("node_batch.graph_id: graph \"",
                                                       part.node_batch().graph_id(),
                                                       "\" was not announced by a graph_header"));
      }
      v1::Graph* g = c.mutable_graphs(it->second);
      // Moved: swapped when the part and the capture share an arena (or are both on the heap).
      google::protobuf::RepeatedPtrField<v1::Node>* nodes =
          part.mutable_node_batch()->mutable_nodes();
      g->mutable_nodes()->Reserve(g->nodes_size() + nodes->size());
      for (v1::Node& node : *nodes) *g->add_nodes() = std::move(node);
      return absl::OkStatus();
    }
    case v1::CapturePart::kIteration:
      *c.add_iterations() = std::move(*part.mutable_iteration());
      return absl::OkStatus();
    case v1::CapturePart::kDivergence:
      if (c.has_divergence()) return absl::InvalidArgumentError("a second divergence record");
      *c.mutable_divergence() = std::move(*part.mutable_divergence());
      return absl::OkStatus();
    case v1::CapturePart::kSourceChunk:
      return ApplySourceChunk(side, *part.mutable_source_chunk());
    case v1::CapturePart::kKernel:
      *c.add_kernels() = std::move(*part.mutable_kernel());
      return absl::OkStatus();
    case v1::CapturePart::kExtra:
      *c.add_extras() = std::move(*part.mutable_extra());
      return absl::OkStatus();
    case v1::CapturePart::kDiagnostic:
      *c.add_diagnostics() = std::move(*part.mutable_diagnostic());
      return absl::OkStatus();
    case v1::CapturePart::kRankDigest:
      *c.add_ranks() = std::move(*part.mutable_rank_digest());
      return absl::OkStatus();
    case v1::CapturePart::kRecord:
      *c.add_records() = std::move(*part.mutable_record());
      return absl::OkStatus();
    case v1::CapturePart::kExportIssue:
      *c.add_export_issues() = std::move(*part.mutable_export_issue());
      return absl::OkStatus();
    case v1::CapturePart::kExportSymbol:
      *c.add_export_symbols() = std::move(*part.mutable_export_symbol());
      return absl::OkStatus();
    case v1::CapturePart::PART_NOT_SET:
      return absl::InvalidArgumentError("the part carries nothing");
    default:
      return absl::InternalError("unhandled part kind");
  }
}

absl::Status CaptureAssembler::ApplySourceChunk(SideState& side, v1::SourceChunk& chunk) {
  if (chunk.path().empty()) return absl::InvalidArgumentError("source_chunk.path is empty");
  v1::SessionCapture& c = *side.capture;
  if (side.source_path.empty()) {
    v1::SourceFile* f = c.add_sources();
    f->set_path(chunk.path());
    f->set_sha256(chunk.sha256());
    side.source_path = chunk.path();
  } else if (side.source_path != chunk.path()) {
    return absl::InvalidArgumentError(absl::StrCat("source \"", side.source_path,
                                                   "\" was still arriving (no piece marked last)"));
  }
  c.mutable_sources(c.sources_size() - 1)->mutable_text()->append(chunk.text());
  if (chunk.last()) side.source_path.clear();
  return absl::OkStatus();
}

absl::Status CaptureAssembler::ApplyFragment(SideState& side, const v1::Fragment& fragment) {
  if (side.fragment_kind.empty()) {
    side.fragment_kind = fragment.kind();
  } else if (side.fragment_kind != fragment.kind()) {
    return absl::InvalidArgumentError(absl::StrCat("fragment.kind \"", fragment.kind(),
                                                   "\" while a fragmented ", side.fragment_kind,
                                                   " was arriving"));
  }
  side.fragment_bytes.append(fragment.data());
  if (!fragment.last()) return absl::OkStatus();

  // The item is whole: take it out of the side's state before anything can fail.
  const std::string kind = std::exchange(side.fragment_kind, {});
  const std::string bytes = std::exchange(side.fragment_bytes, {});
  v1::CapturePart whole;
  const google::protobuf::FieldDescriptor* field = whole.GetDescriptor()->FindFieldByName(kind);
  if (field == nullptr || field->message_type() == nullptr ||
      field->number() == v1::CapturePart::kFragment) {
    return absl::InvalidArgumentError(
        absl::StrCat("fragment.kind \"", kind, "\" is not a capture part"));
  }
  google::protobuf::Message* item = whole.GetReflection()->MutableMessage(&whole, field);
  if (!item->ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the reassembled ", field->name(), " is not a valid ", field->message_type()->name()));
  }
  return Apply(side, whole);
}

void CaptureAssembler::AttachOfferedSources(SideState& side, v1::SessionCapture* imported) {
  auto& offered = *side.capture->mutable_sources();
  if (offered.empty()) return;
  absl::flat_hash_map<absl::string_view, v1::SourceFile*> by_path;
  for (v1::SourceFile& f : offered) by_path.emplace(f.path(), &f);
  // The files an in-process import would read from disk, from what the client read on its disk
  // (moved: each is asked for once).
  AttachSources(imported, side.trace->unkept_source_files(),
                [&](const std::string& file) -> std::optional<std::string> {
                  auto it = by_path.find(file);
                  if (it == by_path.end()) return std::nullopt;
                  return std::move(*it->second->mutable_text());
                });
}

absl::StatusOr<AssembledCaptures> CaptureAssembler::Finish(const v1::EndOfCapture& end) {
  absl::StatusOr<CaptureRefs> refs = FinishInPlace(end);
  if (!refs.ok()) return refs.status();
  AssembledCaptures out;
  out.head = std::move(*head_.capture);
  if (base_.has_header) out.base = std::move(*base_.capture);
  return out;
}

absl::StatusOr<CaptureRefs> CaptureAssembler::FinishInPlace(const v1::EndOfCapture& end) {
  if (end.parts() != parts_) {
    return absl::InvalidArgumentError(absl::StrCat("end marker says ", end.parts(),
                                                   " parts were sent, but ", parts_, " arrived"));
  }
  for (SideState* side : {&head_, &base_}) {
    const absl::string_view name = side == &head_ ? "head" : "base";
    if (!side->fragment_kind.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": the stream ended inside a fragmented ", side->fragment_kind));
    }
    if (!side->source_path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": the stream ended inside source \"", side->source_path, "\""));
    }
    if (side->trace != nullptr) {
      // The log is the capture; a header's non-empty session fields override what it says.
      // The importer's capture is kept where it was made (on the heap), not copied over.
      auto imported = std::make_unique<v1::SessionCapture>(side->trace->Finish());
      if (absl::Status refused = side->trace->Refusal(/*finished=*/true); !refused.ok())
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": ", side->source_name.empty() ? "the log" : side->source_name,
                         ": ", refused.message()));
      if (side->has_header) imported->mutable_session()->MergeFrom(side->capture->session());
      AttachOfferedSources(*side, imported.get());
      side->owned = std::move(imported);
      side->capture = side->owned.get();
      side->has_header = true;
    }
    if (!side->has_header) continue;
    if (absl::Status s = ValidateCapture(*side->capture); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": ", s.message()));
    }
  }
  if (!head_.has_header) return absl::InvalidArgumentError("the stream carried no head capture");
  return CaptureRefs{head_.capture, base_.has_header ? base_.capture : nullptr};
}

}  // namespace cl
