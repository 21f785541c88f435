// The generated protos' descriptors are registered with protobuf's generated pool on first use
// (proto/lazy_descriptors.cmake), when a message of the file is reflected on. Code that finds
// names in that pool before touching a message of theirs (gRPC's server reflection) registers
// them here first.
#ifndef PROTO_REGISTER_FILES_H_
#define PROTO_REGISTER_FILES_H_

namespace cl {

// Registers compile_lens/v1/{capture,report,service}.proto and grpc/health/v1/health.proto with
// the generated pool (and what they import). Thread-safe; cheap after the first call.
void RegisterProtoFiles();

}  // namespace cl

#endif  // PROTO_REGISTER_FILES_H_
