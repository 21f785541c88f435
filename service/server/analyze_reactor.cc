#include "service/server/analyze_reactor.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "capture/stream/chunk_kind.h"
#include "common/grpc_status.h"
#include "common/number_format.h"
#include "common/status_macros.h"
#include "common/stream_hash.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "service/server/chunk_parse.h"

namespace cl {
namespace {

void HashMessage(const grpc::ByteBuffer& message, StreamHash* hash) {
  std::vector<grpc::Slice> slices;
  (void)message.Dump(&slices);
  for (const grpc::Slice& s : slices)
    hash->Add(absl::string_view(reinterpret_cast<const char*>(s.begin()), s.size()));
}

}  // namespace

AnalyzeReactor::AnalyzeReactor(AnalyzeServiceState* state, grpc::CallbackServerContext* context,
                               grpc::ByteBuffer* response)
    : state_(state), context_(context), response_(response), upload_(state->max_session_bytes, state->max_session_memory) {
  if (absl::Status auth = state_->auth.Check(context_->client_metadata()); !auth.ok()) {
    FinishWith(auth);
    return;
  }
  if (state_->inflight.fetch_add(1) >= state_->max_inflight) {
    state_->inflight.fetch_sub(1);
    FinishWith(
        absl::ResourceExhaustedError(absl::StrCat("too many sessions in flight (max_inflight ",
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
  upload_alarm_.Set(absl::ToChronoTime(absl::Now() + timeout), [target = alarm_target_,
                                                                timeout](bool fired) {
    if (!fired) return;  // cancelled: the upload ended, or the call did
    AnalyzeReactor* reactor = nullptr;
    {
      absl::MutexLock lock(&target->mu);
      Phase uploading = Phase::kUploading;
      if (target->reactor == nullptr ||
          !target->reactor->phase_.compare_exchange_strong(uploading, Phase::kFinished)) {
        return;
      }
      // Claimed: nothing else finishes the call now, so OnDone (which follows Finish) cannot
      // have deleted the reactor before Finished below.
      reactor = target->reactor;
    }
    reactor->Finished(
        absl::DeadlineExceededError(absl::StrCat(
            "the capture did not arrive within ", absl::FormatDuration(timeout),
            " (upload_timeout) of the call's start (",
            FormatCount(reactor->messages_.load(std::memory_order_relaxed), "message", "messages"),
            " read); the capture was not analyzed")),
        Rejection::kUploadTimeout);
  });
}

void AnalyzeReactor::OnReadDone(bool ok) {
  if (phase_.load() == Phase::kFinished) return;  // the upload's alarm ended the call
  if (!ok) {
    // The client half-closed, or the call broke, before the end marker.
    if (context_->IsCancelled()) return FinishWith(absl::CancelledError("the call was cancelled"));
    return Refuse(absl::InvalidArgumentError(
        absl::StrCat("the stream ended after message ", messages_.load(),
                     " without an end marker; the capture was not analyzed")));
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
  upload_.options = std::move(*chunk.mutable_options());
  return absl::OkStatus();
}

absl::Status AnalyzeReactor::AcceptMessage(uint64_t number) {
  std::optional<v1::AnalyzeChunk::KindCase> kind;
  {
    grpc::ProtoBufferReader reader(
        &message_);  // done with the buffer before it is moved or cleared
    kind = ChunkKindOnWire(&reader);
  }
  if (!kind) return NotAChunk(number, message_);
  switch (*kind) {
    case v1::AnalyzeChunk::kPart:
    case v1::AnalyzeChunk::kParts: {
      // Counted off the wire as it arrives; parsed by the analysis task.
      const size_t length = message_.Length();
      CL_RETURN_IF_ERROR(
          upload_.assembler.CountBytes(length, [&] { return absl::StrCat("message ", number); }));
      std::vector<std::pair<uint64_t, grpc::ByteBuffer>>& kept = upload_.kept;
      const uint64_t held = upload_.assembler.bytes() + (kept.size() + 1) * kKeptMessageCost;
      if (held > state_->max_session_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "message ", number, ": ", kept.size() + 1, " part-carrying messages hold ", held,
            " bytes with their buffers (", kKeptMessageCost,
            " bytes each), over the session limit of ", state_->max_session_bytes,
            " bytes (max_session_bytes); batch parts into fewer messages (PartBatch)"));
      }
      HashMessage(message_, &upload_.hash);
      kept.emplace_back(number, grpc::ByteBuffer());
      grpc::Slice copy;  // its bytes in a slice of their own, exactly as long as the message
      if (length < kCopyMessagesUnder && message_.DumpToSingleSlice(&copy).ok()) {
        kept.back().second = grpc::ByteBuffer(&copy, 1);
      } else {
        kept.back().second.Swap(&message_);
      }
      return absl::OkStatus();
    }
    case v1::AnalyzeChunk::kEnd: {
      v1::AnalyzeChunk chunk;
      if (!ParseChunk(&message_, &chunk)) return NotAChunk(number, message_);
      upload_.end = chunk.end();
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
  if (!phase_.compare_exchange_strong(uploading, Phase::kAnalyzing))
    return;  // the alarm ended the call
  upload_alarm_.Cancel();
  const bool scheduled = state_->pool->TrySchedule([this] {
    // The task is over (and the session freed) before the call is ended.
    const AnalysisTask::Outcome outcome =
        AnalysisTask(*state_->engine, state_->metrics, state_->recent, &upload_)
            .Run(cancelled_.get(), response_);
    if (outcome.refused) return Refuse(outcome.status);  // the last touch of *this, as below
    FinishWith(outcome.status);  // the last touch of *this: OnDone may delete it at once
  });
  if (!scheduled) {
    FinishWith(absl::ResourceExhaustedError("the analysis queue is full; retry with backoff"),
               Rejection::kQueueFull);
  }
}

void AnalyzeReactor::Refuse(const absl::Status& status) {
  FinishWith(status, status.code() == absl::StatusCode::kResourceExhausted ? Rejection::kTooLarge
                                                                           : Rejection::kInvalid);
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
