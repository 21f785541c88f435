#include "service/server/analyze_reactor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "service/analysis.h"

namespace cl {

AnalyzeReactor::AnalyzeReactor(AnalyzeServiceState* state, grpc::CallbackServerContext* context,
                               v1::AnalyzeResponse* response)
    : state_(state), context_(context), response_(response), assembler_(state->max_session_bytes) {
  if (state_->inflight.fetch_add(1) >= state_->max_inflight) {
    state_->inflight.fetch_sub(1);
    FinishWith(absl::ResourceExhaustedError(absl::StrCat(
        "too many sessions in flight (max_inflight ", state_->max_inflight, "); retry with backoff")));
    return;
  }
  admitted_ = true;
  StartRead(&chunk_);
}

void AnalyzeReactor::OnReadDone(bool ok) {
  if (!ok) {
    // The client half-closed, or the call broke, before the end marker.
    FinishWith(context_->IsCancelled()
                   ? absl::CancelledError("the call was cancelled")
                   : absl::InvalidArgumentError(
                         "the stream ended without an end marker; the capture was not analyzed"));
    return;
  }
  if (absl::Status s = Accept(chunk_); !s.ok()) return FinishWith(s);
  if (ended_) return StartAnalysis();
  StartRead(&chunk_);
}

absl::Status AnalyzeReactor::Accept(v1::AnalyzeChunk& chunk) {
  if (!has_options_) {
    if (chunk.kind_case() != v1::AnalyzeChunk::kOptions) {
      return absl::InvalidArgumentError("the first message of Analyze must carry the options");
    }
    has_options_ = true;
    options_ = std::move(*chunk.mutable_options());
    return absl::OkStatus();
  }
  switch (chunk.kind_case()) {
    case v1::AnalyzeChunk::kPart:
      return assembler_.Add(std::move(*chunk.mutable_part()));
    case v1::AnalyzeChunk::kEnd: {
      absl::StatusOr<AssembledCaptures> captures = assembler_.Finish(chunk.end());
      if (!captures.ok()) return captures.status();
      captures_ = std::move(*captures);
      ended_ = true;
      return absl::OkStatus();
    }
    case v1::AnalyzeChunk::kOptions:
      return absl::InvalidArgumentError("options may only come once, in the first message");
    default:
      return absl::InvalidArgumentError(absl::StrCat("message ", assembler_.parts() + 1, " carries nothing"));
  }
}

void AnalyzeReactor::StartAnalysis() {
  const bool scheduled = state_->pool->TrySchedule([this] {
    absl::StatusOr<v1::AnalyzeResponse> result =
        RunAnalysis(*state_->engine, *captures_, options_, cancelled_.get());
    if (result.ok()) *response_ = std::move(*result);
    FinishWith(result.status());  // the last touch of *this: OnDone may delete it at once
  });
  if (!scheduled) {
    FinishWith(absl::ResourceExhaustedError("the analysis queue is full; retry with backoff"));
  }
}

void AnalyzeReactor::FinishWith(const absl::Status& status) { Finish(ToGrpcStatus(status)); }

void AnalyzeReactor::OnCancel() { cancelled_->store(true); }

void AnalyzeReactor::OnDone() {
  if (admitted_) state_->inflight.fetch_sub(1);
  delete this;
}

}  // namespace cl
