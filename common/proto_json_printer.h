// Proto3 JSON straight from a message, by reflection: the bytes protobuf's own printer writes
// (util::BinaryToJsonStream, which common/proto_json.h otherwise goes through), without the
// message's wire bytes in between: `import-trace -o x.cls.json` of a 73 MB log went from 0.92 to
// 0.60 s user with it.
//
// protobuf 3.21 prints JSON by serializing the message, then re-reading the wire bytes through a
// type resolver and an object writer: for a capture with its log's texts (a 73 MB log makes a
// 97 MB capture) that was most of `import-trace -o x.cls.json` (bench/README.md, "Against
// tlparse"). This printer walks the message instead and writes what that chain writes: fields in
// field-number order, proto3 defaults left out, map entries sorted by key (deterministic
// serialization's order), 64-bit integers quoted, doubles as SimpleDtoa, NaN and infinities as
// quoted words, enums by name, google.protobuf.Struct / Value / ListValue as plain JSON, strings
// escaped as protobuf escapes them (including < > and the invisible characters it escapes for
// HTML safety). tests/common/proto_json_printer_test.cc holds it to
// protobuf's output byte for byte, on every fixture capture and on every code point.
#ifndef COMMON_PROTO_JSON_PRINTER_H_
#define COMMON_PROTO_JSON_PRINTER_H_

#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace cl {

// True when PrintProtoJson writes what protobuf would for messages of `type` with `options`: the
// options it implements (preserve_proto_field_names and add_whitespace either way, nothing else
// set), no well-known type among the fields but Struct (with its Value and ListValue), and no
// float, bytes or non-string-keyed map field (none of which the project's messages have).
bool CanPrintProtoJson(const google::protobuf::Descriptor* type,
                       const google::protobuf::util::JsonPrintOptions& options);

// Writes `message` as JSON to `out` (CanPrintProtoJson must hold). False when `out` failed.
bool PrintProtoJson(const google::protobuf::Message& message,
                    const google::protobuf::util::JsonPrintOptions& options,
                    google::protobuf::io::ZeroCopyOutputStream* out);

// For a message printed a part at a time (a capture whose graphs and records are written as they
// are made): the elements of one repeated message field of the top-level message, one call each,
// as PrintProtoJson writes them inside that field's list. One printer for the whole list: its
// buffers are reused from element to element (a log's records are tens of thousands).
class ProtoJsonElementPrinter {
 public:
  ProtoJsonElementPrinter(const google::protobuf::util::JsonPrintOptions& options,
                          google::protobuf::io::ZeroCopyOutputStream* out);
  ~ProtoJsonElementPrinter();
  ProtoJsonElementPrinter(const ProtoJsonElementPrinter&) = delete;
  ProtoJsonElementPrinter& operator=(const ProtoJsonElementPrinter&) = delete;

  // False once `out` failed (and from then on).
  bool Print(const google::protobuf::Message& element);
  int printed() const { return printed_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int printed_ = 0;
};

// Elements of a repeated message field of the top-level message printed ahead of the message
// (ProtoJsonElementPrinter's text), which `copy` writes to the stream it is given:
// `printed` of them, the first `held` of which the message still holds in its first places
// (stubs, not printed again); the message's own elements after those follow them.
struct ProtoJsonSplice {
  const google::protobuf::FieldDescriptor* field;
  int printed;
  int held;
  absl::FunctionRef<bool(google::protobuf::io::ZeroCopyOutputStream*)> copy;
};

// PrintProtoJson of `message` with `splices` copied in where their fields belong (one per field).
// With the elements each splice writes equal to the ones the whole message would hold there, the
// bytes are PrintProtoJson's of that whole message.
bool PrintProtoJsonSpliced(const google::protobuf::Message& message,
                           const google::protobuf::util::JsonPrintOptions& options,
                           absl::Span<const ProtoJsonSplice> splices,
                           google::protobuf::io::ZeroCopyOutputStream* out);

}  // namespace cl

#endif  // COMMON_PROTO_JSON_PRINTER_H_
