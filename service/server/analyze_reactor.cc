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
    : state_(state),
      context_(context),
      response_(response),
      upload_(state->max_session_bytes, state->max_session_memory) {
  if (absl::Status auth = state_->auth.Check(context_->client_metadata()); !auth.ok()) {
    FinishWith(auth);
    return;
  }
  if (state_->inflight.fetch_add(1) >= state_->max_inflight) {
    state_->inflight.fetch_sub(1);
    // Full: the slot of a call that has sent nothing for a while, if there is one, is this call's.
    if (!state_->watch->Evict()) {
      FinishWith(
          absl::ResourceExhaustedError(absl::StrCat("too many sessions in flight (max_inflight ",
                                                    state_->max_inflight, "); retry with backoff")),
          Rejection::kMaxInflight);
      return;
    }
  }
  holds_slot_.store(true);
  // The response headers go out now, on admission (marked `cl-admitted`), not with the answer: a
  // client that waits for them after the options learns of a refusal (a trailers-only answer,
  // without the mark) before it sends megabytes for nothing.
  context_->AddInitialMetadata("cl-admitted", "1");
  // A raw log may be followed by the source files the client offers (capture_assembler.h): a
  // client offers them only to a server that says so.
  context_->AddInitialMetadata("cl-offered-sources", "1");
  // The largest message it takes: a client sends a raw log in pieces that fill it (fewer, larger
  // messages: each costs the reading thread a hand-off).
  context_->AddInitialMetadata("cl-max-message-bytes", absl::StrCat(state_->max_message_bytes));
  StartSendInitialMetadata();
  watched_ = std::make_shared<Watched>(this);
  state_->watch->Add(watched_);
  StartRead(&message_);
}

bool AnalyzeReactor::Watched::End(UploadEnd why, absl::Duration idle) {
  AnalyzeReactor* reactor = nullptr;
  {
    absl::MutexLock lock(&mu_);
    Phase uploading = Phase::kUploading;
    if (reactor_ == nullptr ||
        !reactor_->phase_.compare_exchange_strong(uploading, Phase::kFinished)) {
      return false;
    }
    // Claimed: nothing else finishes the call now, so OnDone (which follows Finish) cannot have
    // deleted the reactor before Finished below.
    reactor = reactor_;
  }
  if (why == UploadEnd::kEvicted) reactor->holds_slot_.store(false);  // the new call's now
  reactor->Finished(reactor->Stalled(why, idle), why == UploadEnd::kUploadTimeout
                                                     ? Rejection::kUploadTimeout
                                                     : Rejection::kIdle);
  return true;
}

absl::Status AnalyzeReactor::Stalled(UploadEnd why, absl::Duration idle) const {
  const UploadWatchOptions& limits = state_->watch->options();
  const std::string read =
      FormatCount(messages_.load(std::memory_order_relaxed), "message", "messages");
  switch (why) {
    case UploadEnd::kUploadTimeout:
      return absl::DeadlineExceededError(absl::StrCat(
          "the capture did not arrive within ", absl::FormatDuration(limits.upload_timeout),
          " (upload_timeout) of the call's start (", read, " read); the capture was not analyzed"));
    case UploadEnd::kIdle:
      if (ended_.load()) {
        return absl::DeadlineExceededError(absl::StrCat(
            "the end marker came, but the stream stayed open for ",
            absl::FormatDuration(limits.idle_timeout),
            " (idle_timeout): close the stream (half-close) after the end marker; the capture "
            "was not analyzed"));
      }
      return absl::DeadlineExceededError(
          absl::StrCat("nothing arrived for ", absl::FormatDuration(limits.idle_timeout),
                       " (idle_timeout) after ", read, "; the capture was not analyzed"));
    case UploadEnd::kEvicted:
      return absl::ResourceExhaustedError(absl::StrCat(
          "nothing arrived for ", absl::FormatDuration(absl::Trunc(idle, absl::Milliseconds(1))),
          " (after ", read, ") while every max_inflight slot (", state_->max_inflight,
          ") was taken, so the call's slot went to a call ready to send; the capture was not "
          "analyzed: send without pausing, or retry"));
  }
  return absl::InternalError("unknown upload end");
}

void AnalyzeReactor::OnReadDone(bool ok) {
  if (phase_.load() == Phase::kFinished) return;  // the upload watch ended the call
  if (ok) watched_->Read();
  const uint64_t number = ok ? ++messages_ : messages_.load();
  if (read_ahead_ != nullptr) {
    // A raw log's reads go to its import thread, in order, while this reads on (read_ahead.h).
    ReadAhead::Read read{number, ok, grpc::ByteBuffer()};
    read.message.Swap(&message_);
    bool refused = false;
    if (read_ahead_->Push(std::move(read), &refused)) StartRead(&message_);
    if (refused) FinishWith(absl::UnavailableError("the server is shutting down"));
    return;
  }
  if (!Take(ok, number, &message_)) return;
  if (upload_.applying) {
    // From the first bytes of a raw log on, the import runs on an import thread, not here.
    read_ahead_ = std::make_unique<ReadAhead>(
        state_->import_threads->Next(), kReadAheadBytes,
        [this](ReadAhead::Read& read) {
          return phase_.load() != Phase::kFinished && Take(read.ok, read.number, &read.message);
        },
        [this] { StartRead(&message_); });
  }
  StartRead(&message_);  // after the end marker too: the client must close its side
}

bool AnalyzeReactor::Take(bool ok, uint64_t number, grpc::ByteBuffer* message) {
  if (!ok) {
    if (context_->IsCancelled()) {
      FinishWith(absl::CancelledError("the call was cancelled"));
      return false;
    }
    // The client closed its side: after the end marker, the upload is whole.
    if (ended_.load()) {
      StartAnalysis();
      return false;
    }
    Refuse(absl::InvalidArgumentError(
        absl::StrCat("the stream ended after message ", number,
                     " without an end marker; the capture was not analyzed")));
    return false;
  }
  if (ended_.load()) {
    Refuse(absl::InvalidArgumentError(
        absl::StrCat("message ", number, " came after the end marker (message ", number - 1,
                     "), which must be the stream's last; the capture was not analyzed")));
    return false;
  }
  const absl::Status status =
      has_options_ ? AcceptMessage(number, message) : AcceptOptions(number, message);
  message->Clear();  // kept messages were moved out first
  if (!status.ok()) {
    Refuse(status);
    return false;
  }
  return true;
}

absl::Status AnalyzeReactor::AcceptOptions(uint64_t number, grpc::ByteBuffer* message) {
  v1::AnalyzeChunk chunk;
  if (!ParseChunk(message, &chunk)) return NotAChunk(number, *message);
  if (chunk.kind_case() != v1::AnalyzeChunk::kOptions) {
    return absl::InvalidArgumentError("the first message of Analyze must carry the options");
  }
  has_options_ = true;
  upload_.options = std::move(*chunk.mutable_options());
  if (upload_.options.render_site()) upload_.assembler.KeepRecordTexts();
  return absl::OkStatus();
}

absl::Status AnalyzeReactor::AcceptMessage(uint64_t number, grpc::ByteBuffer* message) {
  std::optional<v1::AnalyzeChunk::KindCase> kind;
  {
    grpc::ProtoBufferReader reader(message);  // done with the buffer before it is moved or cleared
    kind = ChunkKindOnWire(&reader);
  }
  if (!kind) return NotAChunk(number, *message);
  switch (*kind) {
    case v1::AnalyzeChunk::kPart:
    case v1::AnalyzeChunk::kParts: {
      // Counted off the wire as it arrives; parsed by the analysis task, or at once for a raw log.
      const size_t length = message->Length();
      CL_RETURN_IF_ERROR(
          upload_.assembler.CountBytes(length, [&] { return absl::StrCat("message ", number); }));
      std::vector<std::pair<uint64_t, grpc::ByteBuffer>>& kept = upload_.kept;
      if (!upload_.applying) {
        grpc::ProtoBufferReader reader(message);
        upload_.applying = CarriesTorchTrace(&reader);
        // From the first bytes of a raw log on, every message is applied as it arrives (those
        // kept so far first, in order): the server then holds the session the import builds,
        // never the log, and the import runs while the client still sends.
        if (upload_.applying) {
          for (auto& [earlier, bytes] : kept) CL_RETURN_IF_ERROR(upload_.Apply(earlier, &bytes));
          kept.clear();
        }
      }
      if (upload_.applying) {
        HashMessage(*message, &upload_.hash);
        return upload_.Apply(number, message);
      }
      const uint64_t held = upload_.assembler.bytes() + (kept.size() + 1) * kKeptMessageCost;
      if (held > state_->max_session_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "message ", number, ": ", kept.size() + 1, " part-carrying messages hold ", held,
            " bytes with their buffers (", kKeptMessageCost,
            " bytes each), over the session limit of ", state_->max_session_bytes,
            " bytes (max_session_bytes); batch parts into fewer messages (PartBatch)"));
      }
      HashMessage(*message, &upload_.hash);
      kept.emplace_back(number, grpc::ByteBuffer());
      grpc::Slice copy;  // its bytes in a slice of their own, exactly as long as the message
      if (length < kCopyMessagesUnder && message->DumpToSingleSlice(&copy).ok()) {
        kept.back().second = grpc::ByteBuffer(&copy, 1);
      } else {
        kept.back().second.Swap(message);
      }
      return absl::OkStatus();
    }
    case v1::AnalyzeChunk::kEnd: {
      v1::AnalyzeChunk chunk;
      if (!ParseChunk(message, &chunk)) return NotAChunk(number, *message);
      upload_.end = chunk.end();
      ended_.store(true);
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
    return;  // the upload watch ended the call
  state_->watch->Remove(watched_.get());
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
  if (phase_.exchange(Phase::kFinished) == Phase::kFinished)
    return;  // ended already (the upload watch)
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
  if (read_ahead_ != nullptr) read_ahead_->Close();  // no import task touches the call after this
  if (watched_ != nullptr) {
    watched_->Detach();
    state_->watch->Remove(watched_.get());
  }
  if (holds_slot_.exchange(false)) state_->inflight.fetch_sub(1);
  delete this;
}

}  // namespace cl
