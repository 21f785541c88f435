#include "bench/load/echo_server.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/byte_buffer.h"

namespace cl::load {
namespace {

// Reads every message of the stream and answers with all of their bytes in one message: what a
// server that only receives the session, and returns as much, costs in gRPC alone.
class EchoReactor : public grpc::ServerGenericBidiReactor {
 public:
  // Admits every call the way cl-server does: response headers, marked, at once.
  explicit EchoReactor(grpc::GenericCallbackServerContext* context) {
    context->AddInitialMetadata("cl-admitted", "1");
    StartSendInitialMetadata();
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (ok) {
      std::vector<grpc::Slice> slices;
      if (in_.Dump(&slices).ok()) {
        for (const grpc::Slice& s : slices)
          received_.append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
      StartRead(&in_);
      return;
    }
    grpc::Slice slice(received_);
    out_ = grpc::ByteBuffer(&slice, 1);
    StartWrite(&out_);
  }
  void OnWriteDone(bool ok) override {
    Finish(ok ? grpc::Status::OK : grpc::Status(grpc::StatusCode::UNAVAILABLE, "write"));
  }
  void OnDone() override { delete this; }

 private:
  grpc::ByteBuffer in_, out_;
  std::string received_;
};

class EchoService : public grpc::CallbackGenericService {
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new EchoReactor(context);
  }
};

}  // namespace

int ServeEcho(const std::string& listen) {
  EchoService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&service);
  builder.SetMaxReceiveMessageSize(1 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::cerr << "cl-load: the echo server cannot listen on " << listen << "\n";
    return 1;
  }
  const std::string host = listen.substr(0, listen.rfind(':'));
  // The line cl-server prints, so that one reader starts either server.
  std::cerr << "cl-server: listening on " << host << ":" << port << std::endl;
  server->Wait();
  return 0;
}

}  // namespace cl::load
