#include "bench/load/hostile.h"

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "capture/schema.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "tests/testing/hostile_inputs.h"
#include "tests/testing/proc_stats.h"
#include "tests/testing/raw_call.h"

namespace cl::load {
namespace {

using ::cl::testing::ReadProc;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Calls with `normal` until one is answered OK (a refusal is retried after `backoff`), for at most
// a minute; fills the normal_* figures, measured from `since`.
void UntilAnswered(const std::string& address, const Session& normal, const Pacing& pacing,
                   Clock::time_point since, HostileFigures* figures) {
  grpc::GenericStub stub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::CompletionQueue cq;
  for (int attempt = 1; SecondsSince(since) < 60; ++attempt) {
    const CallResult call =
        Call(stub, cq, normal, absl::StrCat("normal-", attempt), /*echo=*/false, pacing);
    figures->normal_attempts = attempt;
    if (call.code == grpc::StatusCode::OK && call.report) break;
    std::this_thread::sleep_for(absl::ToChronoNanoseconds(pacing.backoff));
  }
  figures->normal_seconds = SecondsSince(since);
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
}

}  // namespace

HostileFigures RunAmplify(const std::string& address, pid_t pid, const Session& normal,
                          size_t name_bytes, int frames) {
  HostileFigures figures;
  const std::string log = absl::StrCat("/tmp/cl-load-amplify-", getpid(), ".log");
  if (!WriteFile(log, testing::StrTableAmplifier(name_bytes, frames)).ok()) return figures;
  figures.rss_before_mib = ReadProc(pid).rss_mib;
  v1::CaptureHeader header;
  header.set_schema(SchemaVersion());
  header.set_source_name("amplify.log");
  RemoteOptions remote;
  remote.target = address;
  remote.deadline = absl::Seconds(60);
  const Clock::time_point start = Clock::now();
  absl::StatusOr<v1::AnalyzeResponse> answer = AnalyzeRemoteTrace(log, header, {}, remote);
  figures.hostile_seconds = SecondsSince(start);
  figures.code = answer.ok() ? "OK" : absl::StatusCodeToString(answer.status().code());
  UntilAnswered(address, normal, {absl::Seconds(1), absl::Milliseconds(50)}, start, &figures);
  figures.peak_rss_mib = ReadProc(pid).hwm_mib;
  std::remove(log.c_str());
  return figures;
}

HostileFigures RunIdle(const std::string& address, pid_t pid, const Session& normal, int streams,
                       const Pacing& pacing) {
  HostileFigures figures;
  figures.rss_before_mib = ReadProc(pid).rss_mib;
  std::vector<std::unique_ptr<testing::RawCall>> idle;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < streams; ++i) {
    idle.push_back(std::make_unique<testing::RawCall>(address));
    idle.back()->Write(testing::OptionsOnlyMessage());
  }
  UntilAnswered(address, normal, pacing, start, &figures);
  // How the idle streams ended: by eviction (RESOURCE_EXHAUSTED) or at --idle_timeout.
  int evicted = 0;
  for (std::unique_ptr<testing::RawCall>& call : idle)
    evicted += call->Finish().error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
  figures.hostile_seconds = SecondsSince(start);
  figures.code = absl::StrCat(evicted, "_evicted");
  figures.peak_rss_mib = ReadProc(pid).hwm_mib;
  return figures;
}

}  // namespace cl::load
