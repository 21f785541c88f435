#include "bench/load/load.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capture/capture_io.h"
#include "capture/stream/capture_splitter.h"
#include "capture/stream/part_packer.h"
#include "common/status_macros.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace cl::load {
namespace {

constexpr const char* kMethod = "/compile_lens.v1.CompileLens/Analyze";

grpc::ByteBuffer Serialize(const v1::AnalyzeChunk& chunk) {
  grpc::ByteBuffer buffer;
  bool own = false;
  (void)grpc::SerializationTraits<v1::AnalyzeChunk>::Serialize(chunk, &buffer, &own);
  return buffer;
}

}  // namespace

grpc::ByteBuffer Session::HeaderFor(const std::string& id) const {
  v1::AnalyzeChunk chunk = chunks[header];
  chunk.mutable_part()->mutable_header()->mutable_session()->set_id(id);
  return Serialize(chunk);
}

absl::StatusOr<Session> LoadSession(const SessionOptions& options) {
  absl::StatusOr<v1::SessionCapture> head = ReadCaptureFile(options.head);
  if (!head.ok()) return head.status();
  std::optional<v1::SessionCapture> base;
  if (!options.base.empty()) {
    absl::StatusOr<v1::SessionCapture> b = ReadCaptureFile(options.base);
    if (!b.ok()) return b.status();
    base = std::move(*b);
  }
  Session s;
  v1::AnalyzeChunk first;
  first.mutable_options()->set_render_html(options.html);
  s.chunks.push_back(first);
  // The head's header goes alone, in its own message, so that HeaderFor rewrites a small one.
  PartPacker packer(options.batch_parts ? kDefaultPartBudget : 0);
  const auto push = [&](v1::AnalyzeChunk&& chunk) {
    s.chunks.push_back(std::move(chunk));
    return absl::OkStatus();
  };
  auto emit = [&](v1::CapturePart&& part) -> absl::Status {
    if (!part.has_header() || part.side() != v1::HEAD) return packer.Add(std::move(part), push);
    CL_RETURN_IF_ERROR(packer.Flush(push));
    s.header = s.chunks.size();
    CL_RETURN_IF_ERROR(packer.Add(std::move(part), push));
    return packer.Flush(push);
  };
  if (absl::Status st = SplitCapture(*head, v1::HEAD, kDefaultPartBudget, emit); !st.ok())
    return st;
  if (base) {
    if (absl::Status st = SplitCapture(*base, v1::BASE, kDefaultPartBudget, emit); !st.ok())
      return st;
  }
  if (absl::Status st = packer.Flush(push); !st.ok()) return st;
  s.chunks.emplace_back().mutable_end()->set_parts(packer.parts());
  for (const v1::AnalyzeChunk& c : s.chunks) {
    s.serialized.push_back(Serialize(c));
    s.bytes += c.ByteSizeLong();
  }
  return s;
}

CallResult Call(grpc::GenericStub& stub, grpc::CompletionQueue& cq, const Session& session,
                const std::string& id, bool echo, const Pacing& pacing) {
  void* const kOp = reinterpret_cast<void*>(1);
  void* const kMetadata = reinterpret_cast<void*>(2);
  const auto start = Clock::now();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, kMethod, &cq);
  void* tag = nullptr;
  bool ok = false;
  bool metadata_pending = false, answered = false, admitted = false;
  // Headers with a live call, marked by cl-server: admitted. A refusal ends the call with its
  // headers (trailers only).
  auto on_metadata = [&](bool live) {
    metadata_pending = false;
    answered = true;
    admitted = live && context.GetServerInitialMetadata().count("cl-admitted") > 0;
  };
  // Waits for the one pending operation, noting the metadata if it arrives first.
  auto step = [&] {
    while (cq.Next(&tag, &ok)) {
      if (tag != kMetadata) return ok;
      on_metadata(ok);
    }
    return false;
  };
  call->StartCall(kOp);
  bool sent = step();
  if (sent) {
    call->ReadInitialMetadata(kMetadata);
    metadata_pending = true;
  }
  size_t i = 0;
  for (; sent && !(answered && !admitted) && i < session.serialized.size(); ++i) {
    call->Write(i == session.header ? session.HeaderFor(id) : session.serialized[i], kOp);
    sent = step();
    if (i == 0 && sent && metadata_pending) {
      // The options are out: cl-server answers admission with its response headers (or refuses,
      // trailers only). A server that sends none within the wait gets the session anyway.
      const auto wait_until =
          std::chrono::system_clock::now() + absl::ToChronoNanoseconds(pacing.admission_wait);
      if (cq.AsyncNext(&tag, &ok, wait_until) == grpc::CompletionQueue::GOT_EVENT) on_metadata(ok);
    }
  }
  if (sent && !(answered && !admitted)) {
    call->WritesDone(kOp);
    step();
  }
  grpc::ByteBuffer answer;
  call->Read(&answer, kOp);
  const bool read = step();
  grpc::Status status;
  call->Finish(&status, kOp);
  step();
  while (metadata_pending && cq.Next(&tag, &ok)) metadata_pending = tag != kMetadata;
  CallResult r;
  r.code = status.error_code();
  if (!status.ok() && std::getenv("CL_LOAD_DEBUG") != nullptr) {
    std::cerr << status.error_message() << " answered=" << answered << " sent=" << sent
              << " writes=" << i << "\n";
  }
  if (status.ok() && read) {
    if (echo) {
      r.report = answer.Length() == session.bytes;
    } else {
      v1::AnalyzeResponse response;
      r.report =
          grpc::SerializationTraits<v1::AnalyzeResponse>::Deserialize(&answer, &response).ok() &&
          response.has_report();
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

LoadResult RunLoad(const std::string& address, const Session& session, int streams, bool echo,
                   Clock::time_point measure_from, Clock::time_point stop, const std::string& tag,
                   const Pacing& pacing) {
  std::vector<LoadResult> per(static_cast<size_t>(streams));
  std::vector<std::thread> threads;
  for (int t = 0; t < streams; ++t) {
    threads.emplace_back([&, t] {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection per stream, as per job
      args.SetMaxSendMessageSize(1 << 20);
      grpc::GenericStub stub(
          grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
      grpc::CompletionQueue cq;
      LoadResult& r = per[static_cast<size_t>(t)];
      std::mt19937 jitter(static_cast<uint32_t>(t));
      const double backoff = absl::ToDoubleSeconds(pacing.backoff);
      for (uint64_t n = 0; Clock::now() < stop; ++n) {
        const CallResult c =
            Call(stub, cq, session, absl::StrCat(tag, "-", t, "-", n), echo, pacing);
        if (c.code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          std::this_thread::sleep_for(std::chrono::duration<double>(
              backoff * std::uniform_real_distribution<double>(0.5, 1.5)(jitter)));
        }
        if (Clock::now() < measure_from) continue;
        ++r.calls;
        ++r.codes[c.code];
        r.reports += c.report;
        (c.code == grpc::StatusCode::OK ? r.ok_latencies : r.refused_latencies)
            .push_back(c.seconds);
      }
      cq.Shutdown();
      void* tag_ = nullptr;
      bool ok = false;
      while (cq.Next(&tag_, &ok)) {
      }
    });
  }
  for (std::thread& t : threads) t.join();
  LoadResult all;
  for (LoadResult& r : per) {
    all.calls += r.calls;
    all.reports += r.reports;
    for (auto [code, n] : r.codes) all.codes[code] += n;
    all.ok_latencies.insert(all.ok_latencies.end(), r.ok_latencies.begin(), r.ok_latencies.end());
    all.refused_latencies.insert(all.refused_latencies.end(), r.refused_latencies.begin(),
                                 r.refused_latencies.end());
  }
  all.seconds = std::chrono::duration<double>(stop - measure_from).count();
  return all;
}

}  // namespace cl::load
