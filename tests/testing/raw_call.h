// An Analyze call through gRPC's generic API, for tests that must write what no client would: its
// messages are whatever bytes the test writes (server_test, hostile_server_test).
#ifndef TESTS_TESTING_RAW_CALL_H_
#define TESTS_TESTING_RAW_CALL_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"

namespace cl::testing {

class RawCall {
 public:
  // A call of `method` (by default Analyze; any method the server may serve).
  explicit RawCall(const std::string& address,
                   const std::string& method = "/compile_lens.v1.CompileLens/Analyze")
      : generic_(grpc::CreateChannel(address, grpc::InsecureChannelCredentials())) {
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    call_ = generic_.PrepareCall(&context_, method, &cq_);
    call_->StartCall(this);
    Wait();
  }
  ~RawCall() {
    cq_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  bool Write(const std::string& bytes) {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer buffer(&slice, 1);
    call_->Write(buffer, this);
    return Wait();
  }
  // The next message the server sent, as bytes; false when the call ended instead.
  bool Read(std::string* bytes) {
    grpc::ByteBuffer buffer;
    call_->Read(&buffer, this);
    if (!Wait()) return false;
    std::vector<grpc::Slice> slices;
    if (!buffer.Dump(&slices).ok()) return false;
    bytes->clear();
    for (const grpc::Slice& s : slices)
      bytes->append(reinterpret_cast<const char*>(s.begin()), s.size());
    return true;
  }
  void WritesDone() {
    call_->WritesDone(this);
    Wait();
  }
  // The status the server ended the call with (DEADLINE_EXCEEDED if it never did).
  grpc::Status Finish() {
    grpc::Status status;
    call_->Finish(&status, this);
    Wait();
    return status;
  }

 private:
  bool Wait() {
    void* tag = nullptr;
    bool ok = false;
    return cq_.Next(&tag, &ok) && ok;
  }

  grpc::GenericStub generic_;
  grpc::ClientContext context_;
  grpc::CompletionQueue cq_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
};

}  // namespace cl::testing

#endif  // TESTS_TESTING_RAW_CALL_H_
