// Reading and writing the capture model's two file forms.
//
// `.cls.json` is SessionCapture's proto3 JSON with the original field names; `.cls.pb` is its
// binary encoding. Reading checks the schema version and validates references (capture/validate.h)
// so that every caller gets either a capture the passes can trust or an error naming the problem.
#ifndef CAPTURE_CAPTURE_IO_H_
#define CAPTURE_CAPTURE_IO_H_

#include <functional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

enum class CaptureFormat { kJson, kBinary };

// protobuf's parser only says that bytes do not parse. This walks them again by `type`'s
// descriptor to say where: the field path of the first item that is cut short, whose wire type is
// wrong, whose string is not UTF-8, or that nests too deep ("graphs[3].nodes[7].name (byte 1234):
// not UTF-8"). Empty when it finds nothing wrong.
std::string LocateWireProblem(absl::string_view bytes, const google::protobuf::Descriptor* type);

// Parses without validating: for tools that want to look at a broken capture. JSON nested more
// than 200 levels deep (a capture needs under 100) is refused at once, naming where.
absl::StatusOr<v1::SessionCapture> ParseCaptureJson(absl::string_view json);
absl::StatusOr<v1::SessionCapture> ParseCaptureBinary(absl::string_view bytes);

// Parses, checks the schema version and validates. `name` prefixes error messages
// ("head.cls.json").
absl::StatusOr<v1::SessionCapture> LoadCapture(absl::string_view bytes, CaptureFormat format,
                                               absl::string_view name);

// Reads a `.cls.json` / `.cls.pb` file (by extension; `.json` and `.pb` also work) and loads it.
absl::StatusOr<v1::SessionCapture> ReadCaptureFile(const std::string& path);

absl::StatusOr<std::string> CaptureToJson(const v1::SessionCapture& capture);
absl::Status WriteCaptureFile(const std::string& path, const v1::SessionCapture& capture);

// What an import hands over as it makes a capture, so that a writer puts it in the file at once
// rather than the capture holding it to the end (ImportOptions::graph_sink, record_sink): each
// graph, nodes and all, in the capture's order as soon as it is final (the capture keeps the graph
// without its nodes), and each record of the log's list in order (the capture keeps none of them).
using GraphSink = std::function<void(const v1::Graph& graph)>;
using RecordSink = std::function<void(const v1::Record& record)>;
struct CaptureSinks {
  GraphSink graph;
  RecordSink record;
};

// Writes a `.cls.pb` while `make` builds its capture, so that the graphs' nodes and the records'
// texts (most of a capture) are never all in memory: `make` is given the sinks to call, and what
// they are given goes to the file as it comes, then the capture's further graphs and records and
// the rest of it: the file parses to the message WriteCaptureFile would write of the whole
// capture. Returns the capture `make` made, as it left it: the graphs it sank without their nodes,
// none of the records it sank. On an error, `make`'s or the write's, no file is left.
absl::StatusOr<v1::SessionCapture> WriteCapturePbAsMade(
    const std::string& path,
    absl::FunctionRef<absl::StatusOr<v1::SessionCapture>(const CaptureSinks& sinks)> make);

// The same for a `.cls.json`, whose graphs and records must come between the capture's other
// fields: what the sinks are given is printed to unnamed scratch files as it comes (in the
// output's folder), and once `make` is done the capture is printed with that text spliced in
// where it belongs, so the file is byte for byte what WriteCaptureFile writes of the whole
// capture. Where no scratch file can be made, `make` gets no sinks and the capture is written
// whole.
absl::StatusOr<v1::SessionCapture> WriteCaptureJsonAsMade(
    const std::string& path,
    absl::FunctionRef<absl::StatusOr<v1::SessionCapture>(const CaptureSinks& sinks)> make);

// WriteCapturePbAsMade for a path ending in ".pb", else WriteCaptureJsonAsMade.
absl::StatusOr<v1::SessionCapture> WriteCaptureAsMade(
    const std::string& path,
    absl::FunctionRef<absl::StatusOr<v1::SessionCapture>(const CaptureSinks& sinks)> make);

}  // namespace cl

#endif  // CAPTURE_CAPTURE_IO_H_
