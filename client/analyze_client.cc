#include "client/analyze_client.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/internal/resize_uninitialized.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "analyzers/lowered_facts.h"
#include "capture/stream/capture_splitter.h"
#include "capture/stream/part_packer.h"
#include "capture/stream/raw_trace_chunk.h"
#include "capture/torch_trace/importer.h"
#include "capture/torch_trace/source_names.h"
#include "common/file_io.h"
#include "common/grpc_status.h"
#include "common/gz_read.h"
#include "common/mapped_log.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "service/analysis.h"
#include "service/engine.h"
#include "service/thread_pool.h"

namespace cl {
namespace {

// Reports and rendered HTML can be large; the client accepts them whole.
constexpr int kMaxResponseBytes = 512 << 20;

absl::StatusOr<std::string> ReadSecret(const std::string& path, absl::string_view what) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok())
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", text.status().message()));
  return text;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> Credentials(
    const ChannelSecurity& security) {
  if (security.ca_file.empty()) {
    if (!security.cert_file.empty() || !security.key_file.empty()) {
      return absl::FailedPreconditionError(
          "a client certificate (--tls_cert/--tls_key) needs --tls_ca");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (security.cert_file.empty() != security.key_file.empty()) {
    return absl::FailedPreconditionError("--tls_cert and --tls_key go together");
  }
  grpc::SslCredentialsOptions ssl;
  CL_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadSecret(security.ca_file, "--tls_ca"));
  if (!security.cert_file.empty()) {
    CL_ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadSecret(security.cert_file, "--tls_cert"));
    CL_ASSIGN_OR_RETURN(ssl.pem_private_key, ReadSecret(security.key_file, "--tls_key"));
  }
  return grpc::SslCredentials(ssl);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const RemoteOptions& remote) {
  CL_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                      Credentials(remote.security));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxResponseBytes);
  // Spread calls over every address the target resolves to (a headless Service, say).
  args.SetServiceConfigJSON(R"({"loadBalancingConfig":[{"round_robin":{}}]})");
  return grpc::CreateCustomChannel(remote.target, credentials, args);
}

// The bearer token, when the options name one, on the call's metadata.
absl::Status Authorize(const RemoteOptions& remote, grpc::ClientContext* context) {
  if (remote.security.token_file.empty()) return absl::OkStatus();
  CL_ASSIGN_OR_RETURN(std::string token, ReadSecret(remote.security.token_file, "--token_file"));
  context->AddMetadata("authorization", absl::StrCat("Bearer ", absl::StripAsciiWhitespace(token)));
  return absl::OkStatus();
}

}  // namespace

int InProcessThreads(const AssembledCaptures& captures, int requested,
                     const LoweredFacts* lowered) {
  if (requested > 0) return requested;
  const auto small = [](const v1::SessionCapture& c, int64_t nodes) {
    for (const v1::Graph& g : c.graphs()) nodes += g.nodes_size();
    return nodes < 20000 && c.compiles_size() < 200;
  };
  if (small(captures.head, lowered != nullptr ? lowered->nodes() : 0) &&
      (!captures.base || small(*captures.base, 0)))
    return 1;
  return 0;  // one per hardware thread
}

absl::StatusOr<v1::AnalyzeResponse> AnalyzeInProcess(const AssembledCaptures& captures,
                                                     const v1::AnalyzeOptions& options, int threads,
                                                     const LoweredFacts* head_lowered) {
  // The calling thread runs passes too: the pool holds the other threads. One thread is the
  // calling thread alone, and starts none.
  int total = InProcessThreads(captures, threads, head_lowered);
  if (total <= 0) total = ThreadPool::HardwareThreads();
  std::optional<ThreadPool> helpers;
  if (total > 1) helpers.emplace(total - 1, /*max_queue=*/64);
  Engine engine(helpers ? &*helpers : nullptr);
  CaptureRefs refs = RefsOf(captures);
  refs.head_lowered = head_lowered;
  return RunAnalysis(engine, refs, options, /*cancelled=*/nullptr);
}

namespace {

size_t PartBudget(const RemoteOptions& remote) {
  return remote.part_budget == 0 ? kDefaultPartBudget : remote.part_budget;
}

// `chunk` serialized deterministically (maps in key order; protobuf's default order is random per
// map): cl-server keys the sessions it has answered by a hash of the bytes, so a retry must send
// the bytes the first try sent. The slice owns the bytes, uncopied.
grpc::ByteBuffer ChunkBytes(const v1::AnalyzeChunk& chunk) {
  auto* bytes = new std::string(DeterministicBytes(chunk));
  grpc::Slice slice(
      bytes->data(), bytes->size(), [](void* owned) { delete static_cast<std::string*>(owned); },
      bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// The buffers raw log pieces are written into (raw_trace_chunk.h), reused from message to message
// so that each piece is not also copied into fresh pages. gRPC lets go of a message's slice when it
// has sent it, on whichever thread that is: each slice holds the pool, which outlives the call.
class RawChunkBuffers : public std::enable_shared_from_this<RawChunkBuffers> {
 public:
  grpc::ByteBuffer Chunk(v1::Side side, absl::string_view piece) {
    const size_t size = RawTraceChunkSize(side, piece.size());
    auto* held = new Held{shared_from_this(), Take(size)};
    const size_t written = WriteRawTraceChunk(side, piece, held->buffer.data());
    grpc::Slice slice(
        held->buffer.data(), written,
        [](void* owned) {
          std::unique_ptr<Held> held(static_cast<Held*>(owned));
          held->pool->Give(std::move(held->buffer));
        },
        held);
    return grpc::ByteBuffer(&slice, 1);
  }

  // The chunk for `piece`, a part of `log`, sent from the mapping itself: only the few bytes before
  // it are written. gRPC holds the piece's slice until it has sent it, and the slice holds the log;
  // once sent, the piece's pages are dropped from the process (they stay in the page cache).
  static grpc::ByteBuffer Referencing(v1::Side side, absl::string_view piece,
                                      std::shared_ptr<const MappedLog> log) {
    char header[kMaxRawTraceChunkHeader];
    const size_t n = WriteRawTraceChunkHeader(side, piece.size(), header);
    auto* held = new HeldPiece{std::move(log), piece};
    grpc::Slice slices[2] = {grpc::Slice(header, n),  // copied
                             grpc::Slice(
                                 const_cast<char*>(piece.data()), piece.size(),
                                 [](void* owned) {
                                   std::unique_ptr<HeldPiece> held(static_cast<HeldPiece*>(owned));
                                   held->log->Drop(held->piece);
                                 },
                                 held)};
    return grpc::ByteBuffer(slices, 2);
  }

 private:
  struct HeldPiece {
    std::shared_ptr<const MappedLog> log;
    absl::string_view piece;
  };
  struct Held {
    std::shared_ptr<RawChunkBuffers> pool;
    std::string buffer;
  };

  std::string Take(size_t size) {
    std::string buffer;
    {
      absl::MutexLock lock(&mu_);
      if (!free_.empty()) {
        buffer = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (buffer.size() < size) absl::strings_internal::STLStringResizeUninitialized(&buffer, size);
    return buffer;
  }

  void Give(std::string buffer) {
    absl::MutexLock lock(&mu_);
    if (free_.size() < 4) free_.push_back(std::move(buffer));
  }

  absl::Mutex mu_;
  std::vector<std::string> free_ ABSL_GUARDED_BY(mu_);
};

// What a cl-server says of itself in the response headers it admits a call with.
struct Admission {
  // `cl-offered-sources`: a raw log may be followed by the source files the client offers
  // (servers from before that refuse such a stream as mixing typed parts and raw bytes).
  bool takes_offered_sources = false;
  // `cl-max-message-bytes`: the largest message the server takes (0: it does not say).
  size_t max_message_bytes = 0;
};

// The most log bytes one message carries. Each message costs the server a hand-off between
// threads: 1 MiB pieces took 5-8 % off an upload of a 73 MB log against 512 KiB ones (two runs of
// 12 alternating rounds, bench/README.md). Not larger: the server imports a message only once it
// has all of it.
constexpr size_t kMaxRawPiece = 1 << 20;
// Room for a raw piece's framing (raw_trace_chunk.h: 10 bytes for a piece of 1 MiB).
constexpr size_t kRawFraming = 64;

// How many log bytes each raw message carries: what fills the server's largest message, up to
// kMaxRawPiece; the part budget where the caller set one or the server does not say (a server
// from before it did).
size_t RawPieceBytes(const RemoteOptions& remote, const Admission& admission) {
  size_t message = PartBudget(remote);
  if (remote.part_budget == 0 && admission.max_message_bytes > 0)
    message = std::min(admission.max_message_bytes, kMaxRawPiece);
  return message > 2 * kRawFraming ? message - kRawFraming : kRawFraming;
}

// What Stream hands the function that sends a call's parts.
struct PartSink {
  absl::FunctionRef<absl::Status(v1::CapturePart&&)> part;
  // A piece of a raw log, as a message of its own written straight from the piece.
  absl::FunctionRef<absl::Status(v1::Side, absl::string_view)> raw_trace;
  // A piece of a mapped log, sent from the mapping (RawChunkBuffers::Referencing).
  absl::FunctionRef<absl::Status(v1::Side, absl::string_view,
                                 const std::shared_ptr<const MappedLog>&)>
      raw_trace_mapped;
};

// One Analyze call: the options, whatever `send_parts` emits, the end marker. A failed Write means
// the server has already finished the call (with an error, say): stop sending and let Finish()
// tell why.
absl::StatusOr<v1::AnalyzeResponse> Stream(
    const v1::AnalyzeOptions& options, const RemoteOptions& remote,
    absl::FunctionRef<absl::Status(const PartSink&, const Admission&)> send_parts) {
  CL_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, MakeChannel(remote));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + remote.deadline));
  CL_RETURN_IF_ERROR(Authorize(remote, &context));
  // CompileLens.Analyze with the messages as bytes (ChunkBytes); the answer is parsed below.
  static const char kAnalyzeMethod[] = "/compile_lens.v1.CompileLens/Analyze";
  const grpc::internal::RpcMethod method(kAnalyzeMethod,
                                         grpc::internal::RpcMethod::CLIENT_STREAMING, channel);
  grpc::ByteBuffer response_bytes;
  std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer(
      grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(channel.get(), method, &context,
                                                                    &response_bytes));

  bool open = true;
  uint64_t bytes_sent = 0;
  auto write_bytes = [&](const grpc::ByteBuffer& bytes) {
    if (!open) return;
    bytes_sent += bytes.Length();
    open = writer->Write(bytes);
    if (open && remote.on_sent) remote.on_sent(bytes_sent);
  };
  auto write = [&](const v1::AnalyzeChunk& chunk) {
    if (open) write_bytes(ChunkBytes(chunk));
  };
  v1::AnalyzeChunk first;
  *first.mutable_options() = options;
  write(first);
  // cl-server answers admission at once: its response headers come marked `cl-admitted` when it
  // takes the call, and a refused call (max_inflight, auth) ends with them unmarked. Waiting for
  // them here means a refusal costs the options, not the upload.
  Admission admission;
  if (open) {
    writer->WaitForInitialMetadata();
    const auto& said = context.GetServerInitialMetadata();
    admission.takes_offered_sources = said.count("cl-offered-sources") > 0;
    if (const auto it = said.find("cl-max-message-bytes"); it != said.end()) {
      int bytes = 0;
      if (absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &bytes) &&
          bytes > 0)
        admission.max_message_bytes = static_cast<size_t>(bytes);
    }
    if (said.count("cl-admitted") == 0) {
      writer->WritesDone();
      absl::Status refused = FromGrpcStatus(writer->Finish());
      if (refused.ok())
        refused =
            absl::UnknownError("the server answered without admitting the call (not a cl-server?)");
      return absl::Status(refused.code(), absl::StrCat(remote.target, ": ", refused.message()));
    }
  }
  PartPacker packer(PartBudget(remote));
  const auto emit = [&](v1::AnalyzeChunk&& chunk) -> absl::Status {
    write(chunk);
    return open ? absl::OkStatus() : absl::AbortedError("the server closed the stream");
  };
  const auto buffers = std::make_shared<RawChunkBuffers>();
  uint64_t raw_parts = 0;
  const auto add_part = [&](v1::CapturePart&& part) { return packer.Add(std::move(part), emit); };
  const auto send_raw = [&](const grpc::ByteBuffer& message) -> absl::Status {
    CL_RETURN_IF_ERROR(packer.Flush(emit));  // what was queued goes first, in order
    write_bytes(message);
    ++raw_parts;
    return open ? absl::OkStatus() : absl::AbortedError("the server closed the stream");
  };
  const auto add_raw_trace = [&](v1::Side side, absl::string_view piece) {
    return send_raw(buffers->Chunk(side, piece));
  };
  const auto add_raw_trace_mapped = [&](v1::Side side, absl::string_view piece,
                                        const std::shared_ptr<const MappedLog>& log) {
    return send_raw(RawChunkBuffers::Referencing(side, piece, log));
  };
  // FunctionRefs: the lambdas must outlive them.
  const PartSink sink{add_part, add_raw_trace, add_raw_trace_mapped};
  absl::Status sent = send_parts(sink, admission);
  if (sent.ok()) sent = packer.Flush(emit);
  if (sent.ok()) {
    v1::AnalyzeChunk end;
    end.mutable_end()->set_parts(packer.parts() + raw_parts);
    write(end);
  } else if (!absl::IsAborted(sent)) {
    // It failed here (the log would not read, say): cancel rather than half-close, so that the
    // server does not refuse a cut-short stream, and report this failure rather than that refusal.
    context.TryCancel();
    writer->Finish();  // CANCELLED: what the cancellation caused, not news
    return sent;
  }
  if (open) writer->WritesDone();
  if (const absl::Status status = FromGrpcStatus(writer->Finish()); !status.ok()) {
    return absl::Status(status.code(), absl::StrCat(remote.target, ": ", status.message()));
  }
  v1::AnalyzeResponse response;
  if (const absl::Status parsed = FromGrpcStatus(
          grpc::SerializationTraits<v1::AnalyzeResponse>::Deserialize(&response_bytes, &response));
      !parsed.ok()) {
    return absl::Status(
        parsed.code(),
        absl::StrCat(remote.target, ": the answer does not read: ", parsed.message()));
  }
  return response;
}

}  // namespace

absl::StatusOr<v1::AnalyzeResponse> AnalyzeRemote(const AssembledCaptures& captures,
                                                  const v1::AnalyzeOptions& options,
                                                  const RemoteOptions& remote) {
  const size_t budget = PartBudget(remote);
  return Stream(options, remote, [&](const PartSink& sink, const Admission&) -> absl::Status {
    CL_RETURN_IF_ERROR(SplitCapture(captures.head, v1::HEAD, budget, sink.part));
    if (captures.base)
      CL_RETURN_IF_ERROR(SplitCapture(*captures.base, v1::BASE, budget, sink.part));
    return absl::OkStatus();
  });
}

absl::StatusOr<v1::AnalyzeResponse> AnalyzeRemoteTrace(const std::string& log_path,
                                                       const v1::CaptureHeader& header,
                                                       const v1::AnalyzeOptions& options,
                                                       const RemoteOptions& remote,
                                                       const ImportOptions* sources) {
  const size_t budget = PartBudget(remote);
  const auto send = [&](const PartSink& sink, const Admission& admission) -> absl::Status {
    if (header.has_session() || !header.source_name().empty() || header.post_grad_nodes_only()) {
      v1::CapturePart part;
      part.set_side(v1::HEAD);
      *part.mutable_header() = header;
      CL_RETURN_IF_ERROR(sink.part(std::move(part)));
    }
    absl::Status sent;
    bool any = false;
    SourceNameScanner names;
    const bool scan_names = sources != nullptr && admission.takes_offered_sources;
    if (std::shared_ptr<const MappedLog> log = MappedLog::Open(log_path)) {
      // A plain log goes from its mapping, uncopied: copying each piece into its message was a
      // third of the client's CPU, on the cores it shares with the server (bench/README.md). The
      // pieces are whole pages, so that each is dropped whole once sent.
      const size_t page = MappedLog::PageBytes();
      const size_t piece_bytes = std::max(page, RawPieceBytes(remote, admission) / page * page);
      const absl::string_view bytes = log->bytes();
      for (size_t at = 0; at < bytes.size() && sent.ok(); at += piece_bytes) {
        const absl::string_view piece = bytes.substr(at, piece_bytes);
        if (scan_names) names.Feed(piece);
        any = true;
        sent = sink.raw_trace_mapped(v1::HEAD, piece, log);
      }
    } else {
      CL_RETURN_IF_ERROR(ReadMaybeGzipped(log_path, RawPieceBytes(remote, admission),
                                          [&](absl::string_view bytes) {
                                            if (scan_names) names.Feed(bytes);
                                            any = true;
                                            sent = sink.raw_trace(v1::HEAD, bytes);
                                            return sent.ok();
                                          }));
    }
    CL_RETURN_IF_ERROR(sent);
    // An empty log is still a log: the server says what it makes of one (it refuses it).
    if (!any) CL_RETURN_IF_ERROR(sink.raw_trace(v1::HEAD, ""));
    if (sources == nullptr || !admission.takes_offered_sources) return absl::OkStatus();
    // The user's files the log spells, as this machine has them: the server keeps the ones the
    // session names, as an import here would have read them.
    uint64_t offered = 0;
    for (const std::string& file : names.Finish()) {
      if (!IsUserSourceFile(file)) continue;
      std::optional<std::string> text = ReadSourceFile(*sources, file);
      if (!text || offered + text->size() > kMaxOfferedSourceBytes) continue;
      offered += text->size();
      v1::SourceFile source;
      source.set_path(file);
      source.set_text(*std::move(text));
      CL_RETURN_IF_ERROR(SplitSource(source, v1::HEAD, budget, sink.part));
    }
    return absl::OkStatus();
  };
  return Stream(options, remote, send);
}

absl::Status CheckHealth(const RemoteOptions& remote, const std::string& service) {
  const std::string& target = remote.target;
  CL_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, MakeChannel(remote));
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + remote.deadline));
  CL_RETURN_IF_ERROR(Authorize(remote, &context));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  CL_RETURN_IF_ERROR(FromGrpcStatus(stub->Check(&context, request, &response)));
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::UnavailableError(
        absl::StrCat(target, " is ",
                     grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())));
  }
  return absl::OkStatus();
}

}  // namespace cl
