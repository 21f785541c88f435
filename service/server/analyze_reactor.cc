#include "service/server/analyze_reactor.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "capture/capture_io.h"
#include "capture/stream/chunk_kind.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "common/stream_hash.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "service/analysis.h"

namespace cl {
namespace {

// What gRPC's own deserializer does (protobuf's default limits: recursion depth 100), here so that
// the error can say which message it was and why it may have failed.
bool ParseChunk(grpc::ByteBuffer* message, v1::AnalyzeChunk* chunk) {
  grpc::ProtoBufferReader reader(message);
  return chunk->ParseFromZeroCopyStream(&reader);
}

// Names the field where `message` goes wrong ("parts.parts[2].graph.nodes[7].name (byte 1234): not
// UTF-8"), walking it again: only on this error path.
absl::Status NotAChunk(uint64_t number, const grpc::ByteBuffer& message) {
  grpc::Slice whole;
  const std::string where =
      message.DumpToSingleSlice(&whole).ok()
          ? LocateWireProblem(absl::string_view(reinterpret_cast<const char*>(whole.begin()), whole.size()),
                              v1::AnalyzeChunk::descriptor())
          : "";
  return absl::InvalidArgumentError(absl::StrCat(
      "message ", number, " is not an AnalyzeChunk",
      where.empty() ? " (cut short, or a string field that is not UTF-8, or nested past the parse depth)"
                    : absl::StrCat(": ", where),
      "; the capture was not analyzed"));
}

void HashMessage(const grpc::ByteBuffer& message, StreamHash* hash) {
  std::vector<grpc::Slice> slices;
  (void)message.Dump(&slices);
  for (const grpc::Slice& s : slices) hash->Add(absl::string_view(reinterpret_cast<const char*>(s.begin()), s.size()));
}

}  // namespace

AnalyzeReactor::AnalyzeReactor(AnalyzeServiceState* state, grpc::CallbackServerContext* context,
                               grpc::ByteBuffer* response)
    : state_(state), context_(context), response_(response), assembler_(state->max_session_bytes, &arena_) {
  if (absl::Status auth = state_->auth.Check(context_->client_metadata()); !auth.ok()) {
    FinishWith(auth);
    return;
  }
  if (state_->inflight.fetch_add(1) >= state_->max_inflight) {
    state_->inflight.fetch_sub(1);
    FinishWith(absl::ResourceExhaustedError(absl::StrCat("too many sessions in flight (max_inflight ",
                                                         state_->max_inflight, "); retry with backoff")),
               Rejection::kMaxInflight);
    return;
  }
  admitted_ = true;
  // The response headers go out now, on admission (marked `cl-admitted`), not with the answer: a
  // client that waits for them after the options learns of a refusal (a trailers-only answer,
  // without the mark) before it sends megabytes for nothing.
  context_->AddInitialMetadata("cl-admitted", "1");
  StartSendInitialMetadata();
  StartUploadAlarm();
  StartRead(&message_);
}

void AnalyzeReactor::StartUploadAlarm() {
  const absl::Duration timeout = state_->upload_timeout;
  if (timeout == absl::InfiniteDuration()) return;
  alarm_target_ = std::make_shared<AlarmTarget>();
  {
    absl::MutexLock lock(&alarm_target_->mu);
    alarm_target_->reactor = this;
  }
  upload_alarm_.Set(absl::ToChronoTime(absl::Now() + timeout), [target = alarm_target_, timeout](bool fired) {
    if (!fired) return;  // cancelled: the upload ended, or the call did
    AnalyzeReactor* reactor = nullptr;
    {
      absl::MutexLock lock(&target->mu);
      Phase uploading = Phase::kUploading;
      if (target->reactor == nullptr ||
          !target->reactor->phase_.compare_exchange_strong(uploading, Phase::kFinished)) {
        return;
      }
      // Claimed: nothing else finishes the call now, so OnDone (which follows Finish) cannot have
      // deleted the reactor before Finished below.
      reactor = target->reactor;
    }
    reactor->Finished(
        absl::DeadlineExceededError(absl::StrCat(
            "the capture did not arrive within ", absl::FormatDuration(timeout), " (upload_timeout) of the call's start (",
            reactor->messages_.load(std::memory_order_relaxed),
            " message(s) read); the capture was not analyzed")),
        Rejection::kUploadTimeout);
  });
}

void AnalyzeReactor::OnReadDone(bool ok) {
  if (phase_.load() == Phase::kFinished) return;  // the upload's alarm ended the call
  if (!ok) {
    // The client half-closed, or the call broke, before the end marker.
    if (context_->IsCancelled()) return FinishWith(absl::CancelledError("the call was cancelled"));
    return Refuse(absl::InvalidArgumentError(absl::StrCat(
        "the stream ended after message ", messages_.load(), " without an end marker; the capture was not analyzed")));
  }
  const uint64_t number = ++messages_;
  const absl::Status status = has_options_ ? AcceptMessage(number) : AcceptOptions(number);
  message_.Clear();  // kept messages were moved out first
  if (!status.ok()) return Refuse(status);
  if (ended_) return StartAnalysis();
  StartRead(&message_);
}

absl::Status AnalyzeReactor::AcceptOptions(uint64_t number) {
  v1::AnalyzeChunk chunk;
  if (!ParseChunk(&message_, &chunk)) return NotAChunk(number, message_);
  if (chunk.kind_case() != v1::AnalyzeChunk::kOptions) {
    return absl::InvalidArgumentError("the first message of Analyze must carry the options");
  }
  has_options_ = true;
  options_ = std::move(*chunk.mutable_options());
  return absl::OkStatus();
}

absl::Status AnalyzeReactor::AcceptMessage(uint64_t number) {
  std::optional<v1::AnalyzeChunk::KindCase> kind;
  {
    grpc::ProtoBufferReader reader(&message_);  // done with the buffer before it is moved or cleared
    kind = ChunkKindOnWire(&reader);
  }
  if (!kind) return NotAChunk(number, message_);
  switch (*kind) {
    case v1::AnalyzeChunk::kPart:
    case v1::AnalyzeChunk::kParts: {
      // Counted off the wire as it arrives; parsed by the analysis task.
      const size_t length = message_.Length();
      CL_RETURN_IF_ERROR(assembler_.CountBytes(length, [&] { return absl::StrCat("message ", number); }));
      const uint64_t held = assembler_.bytes() + (kept_.size() + 1) * kKeptMessageCost;
      if (held > state_->max_session_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "message ", number, ": ", kept_.size() + 1, " part-carrying messages hold ", held,
            " bytes with their buffers (", kKeptMessageCost, " bytes each), over the session limit of ",
            state_->max_session_bytes, " bytes (max_session_bytes); batch parts into fewer messages (PartBatch)"));
      }
      HashMessage(message_, &upload_hash_);
      kept_.emplace_back(number, grpc::ByteBuffer());
      grpc::Slice copy;  // its bytes in a slice of their own, exactly as long as the message
      if (length < kCopyMessagesUnder && message_.DumpToSingleSlice(&copy).ok()) {
        kept_.back().second = grpc::ByteBuffer(&copy, 1);
      } else {
        kept_.back().second.Swap(&message_);
      }
      return absl::OkStatus();
    }
    case v1::AnalyzeChunk::kEnd: {
      v1::AnalyzeChunk chunk;
      if (!ParseChunk(&message_, &chunk)) return NotAChunk(number, message_);
      end_ = chunk.end();
      ended_ = true;
      return absl::OkStatus();
    }
    case v1::AnalyzeChunk::kOptions:
      return absl::InvalidArgumentError("options may only come once, in the first message");
    default:
      return absl::InvalidArgumentError(absl::StrCat("message ", number, " carries nothing"));
  }
}

void AnalyzeReactor::StartAnalysis() {
  Phase uploading = Phase::kUploading;
  if (!phase_.compare_exchange_strong(uploading, Phase::kAnalyzing)) return;  // the alarm ended the call
  upload_alarm_.Cancel();
  const bool scheduled = state_->pool->TrySchedule([this] {
    absl::Status status = Assemble();
    if (!status.ok()) return Refuse(status);  // the last touch of *this, as below
    state_->metrics->RecordCaptureBytes(assembler_.bytes());
    std::string key = RecentSessions::Key(*captures_, options_, assembler_.bytes(), upload_hash_.Finish());
    switch (key.empty() ? RecentSessions::Claim::kNew : state_->recent->Begin(key, response_)) {
      case RecentSessions::Claim::kDone:
        status = absl::OkStatus();  // analyzed already: the same answer, not a second analysis
        break;
      case RecentSessions::Claim::kRunning:
        status = absl::AbortedError(absl::StrCat("session ", captures_->head->session().id(),
                                                 " is being analyzed by another call; retry shortly"));
        break;
      case RecentSessions::Claim::kNew:
        status = Analyze(key);
        break;
    }
    // The session is freed here, on the thread that built it, before the call ends.
    captures_.reset();
    arena_.Reset();
    FinishWith(status);  // the last touch of *this: OnDone may delete it at once
  });
  if (!scheduled) {
    FinishWith(absl::ResourceExhaustedError("the analysis queue is full; retry with backoff"), Rejection::kQueueFull);
  }
}

absl::Status AnalyzeReactor::Assemble() {
  for (auto& [number, message] : kept_) {
    auto* chunk = google::protobuf::Arena::CreateMessage<v1::AnalyzeChunk>(&arena_);
    if (!ParseChunk(&message, chunk)) return NotAChunk(number, message);
    message.Clear();
    CL_RETURN_IF_ERROR(assembler_.AddCountedMessage(*chunk, number));
  }
  kept_.clear();
  CL_ASSIGN_OR_RETURN(captures_, assembler_.FinishInPlace(end_));
  return absl::OkStatus();
}

absl::Status AnalyzeReactor::Analyze(const std::string& key) {
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::AnalyzeResponse> result = RunAnalysis(*state_->engine, *captures_, options_, cancelled_.get());
  state_->metrics->RecordAnalysis(captures_->head->session(), result, absl::Now() - start);
  absl::Status status = result.status();
  if (result.ok()) {
    // Serialized once, here: the same bytes answer this call and any duplicate of it.
    bool own_buffer = false;
    status = FromGrpcStatus(grpc::SerializationTraits<v1::AnalyzeResponse>::Serialize(*result, response_, &own_buffer));
  }
  if (!key.empty()) {
    if (status.ok()) state_->recent->Done(key, *response_);
    else state_->recent->Abandon(key);
  }
  return status;
}

void AnalyzeReactor::Refuse(const absl::Status& status) {
  FinishWith(status, status.code() == absl::StatusCode::kResourceExhausted ? Rejection::kTooLarge : Rejection::kInvalid);
}

void AnalyzeReactor::FinishWith(const absl::Status& status, std::optional<Rejection> rejection) {
  if (phase_.exchange(Phase::kFinished) == Phase::kFinished) return;  // ended already (the alarm)
  Finished(status, rejection);
}

void AnalyzeReactor::Finished(const absl::Status& status, std::optional<Rejection> rejection) {
  if (rejection) state_->metrics->RecordRejection(*rejection);
  // A call cancelled at its deadline ends DEADLINE_EXCEEDED (as the client sees it), so that
  // grpc_server_handled_total tells a slow server from a client that gave up. The client's
  // cancellation and the server's own deadline timer race to arrive first, hence the slack.
  constexpr auto kDeadlineSlack = std::chrono::seconds(1);
  if (status.code() == absl::StatusCode::kCancelled &&
      context_->deadline() <= std::chrono::system_clock::now() + kDeadlineSlack) {
    return Finish(ToGrpcStatus(absl::DeadlineExceededError("the call's deadline passed")));
  }
  Finish(ToGrpcStatus(status));
}

void AnalyzeReactor::OnCancel() { cancelled_->store(true); }

void AnalyzeReactor::OnDone() {
  if (alarm_target_ != nullptr) {
    absl::MutexLock lock(&alarm_target_->mu);
    alarm_target_->reactor = nullptr;
  }
  if (admitted_) state_->inflight.fetch_sub(1);
  delete this;
}

}  // namespace cl
