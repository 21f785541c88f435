#include "service/server/analysis_task.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "service/analysis.h"
#include "service/server/chunk_parse.h"

namespace cl {

absl::Status CallUpload::CheckMemory(uint64_t number) {
  if (const uint64_t used = arena.SpaceUsed(); used > max_memory) {
    return absl::ResourceExhaustedError(
        absl::StrCat("message ", number, ": the session takes ", used,
                     " bytes in memory once parsed, over the limit of ", max_memory,
                     " bytes (max_session_memory)"));
  }
  return absl::OkStatus();
}

absl::Status CallUpload::Apply(uint64_t number, grpc::ByteBuffer* message) {
  // A log's bytes go to the import from the received slices themselves, not parsed into a copy.
  if (std::optional<absl::Status> raw =
          ApplyRawTraceParts(message,
                             [&](v1::Side side, absl::Span<const absl::string_view> pieces) {
                               return assembler.AddCountedTorchTrace(side, pieces);
                             });
      raw.has_value()) {
    CL_RETURN_IF_ERROR(*raw);
    message->Clear();
    return CheckMemory(number);
  }
  // On the heap, not the arena: a raw log's bytes are fed to the import and dropped, never held.
  // Typed parts are copied onto the arena by the assembler, and counted there.
  v1::AnalyzeChunk chunk;
  if (!ParseChunk(message, &chunk)) return NotAChunk(number, *message);
  message->Clear();
  CL_RETURN_IF_ERROR(assembler.AddCountedMessage(chunk, number));
  return CheckMemory(number);
}

AnalysisTask::Outcome AnalysisTask::Run(const std::atomic<bool>* cancelled,
                                        grpc::ByteBuffer* response) {
  if (absl::Status status = Assemble(); !status.ok()) return {status, /*refused=*/true};
  metrics_.RecordCaptureBytes(upload_.assembler.bytes());
  const std::string key = RecentSessions::Key(*captures_, upload_.options,
                                              upload_.assembler.bytes(), upload_.hash.Finish());
  absl::Status status;
  switch (key.empty() ? RecentSessions::Claim::kNew : recent_.Begin(key, response)) {
    case RecentSessions::Claim::kDone:
      status = absl::OkStatus();  // analyzed already: the same answer, not a second analysis
      break;
    case RecentSessions::Claim::kRunning:
      status =
          absl::AbortedError(absl::StrCat("session ", captures_->head->session().id(),
                                          " is being analyzed by another call; retry shortly"));
      break;
    case RecentSessions::Claim::kNew:
      status = Analyze(key, cancelled, response);
      break;
  }
  // The session is freed here, on the thread that built it, before the call ends.
  captures_.reset();
  upload_.arena.Reset();
  upload_.lowered = LoweredFacts();
  return {status};
}

absl::Status AnalysisTask::Assemble() {
  for (auto& [number, message] : upload_.kept) {
    auto* chunk = google::protobuf::Arena::CreateMessage<v1::AnalyzeChunk>(&upload_.arena);
    if (!ParseChunk(&message, chunk)) return NotAChunk(number, message);
    message.Clear();
    CL_RETURN_IF_ERROR(upload_.CheckMemory(number));
    CL_RETURN_IF_ERROR(upload_.assembler.AddCountedMessage(*chunk, number));
  }
  upload_.kept.clear();
  CL_ASSIGN_OR_RETURN(captures_, upload_.assembler.FinishInPlace(upload_.end));
  captures_->head_lowered = &upload_.lowered;  // empty unless the import kept facts, not nodes
  return absl::OkStatus();
}

absl::Status AnalysisTask::Analyze(const std::string& key, const std::atomic<bool>* cancelled,
                                   grpc::ByteBuffer* response) {
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::AnalyzeResponse> result =
      RunAnalysis(engine_, *captures_, upload_.options, cancelled);
  metrics_.RecordAnalysis(captures_->head->session(), result, absl::Now() - start);
  absl::Status status = result.status();
  if (result.ok()) {
    // Serialized once, here: the same bytes answer this call and any duplicate of it.
    bool own_buffer = false;
    status = FromGrpcStatus(
        grpc::SerializationTraits<v1::AnalyzeResponse>::Serialize(*result, response, &own_buffer));
  }
  if (!key.empty()) {
    if (status.ok())
      recent_.Done(key, *response);
    else
      recent_.Abandon(key);
  }
  return status;
}

}  // namespace cl
