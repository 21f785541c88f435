#include "capture/capture_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capture/schema.h"
#include "capture/validate.h"
#include "common/file_io.h"
#include "common/proto_json.h"
#include "common/proto_json_printer.h"
#include "common/proto_status.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/wire_format_lite.h"

namespace cl {
namespace {

// A capture's JSON: the proto field names, no whitespace. Indenting made a quarter of a big
// capture's bytes (35 of 157 MB for a 74 MB log), each written, and copied, once more; `jq .`
// shows one indented.
google::protobuf::util::JsonPrintOptions CaptureJsonOptions() {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.add_whitespace = false;
  return options;
}

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::internal::WireFormatLite;

// The offset of the first byte of `text` that is not part of well-formed UTF-8, if any.
std::optional<size_t> FirstInvalidUtf8(absl::string_view text) {
  for (size_t at = 0; at < text.size();) {
    char32_t cp = 0;
    const size_t len = DecodeUtf8(text.substr(at), cp);
    if (len == 0) return at;
    at += len;
  }
  return std::nullopt;
}

// LocateWireProblem, below `path` (at `offset` in the whole, `depth` messages deep).
std::string LocateWireProblemIn(absl::string_view bytes, const Descriptor* type,
                                const std::string& path, size_t offset, int depth) {
  constexpr int kMaxDepth = 100;  // protobuf's default recursion limit
  auto where = [&](const std::string& field, size_t at) {
    return absl::StrCat(path.empty() ? "" : path + ".", field, " (byte ", offset + at, ")");
  };
  if (depth > kMaxDepth)
    return absl::StrCat(path, ": nested more than ", kMaxDepth, " messages deep");
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  absl::flat_hash_map<int, int> seen;  // field number -> items so far, for repeated fields' indices
  while (true) {
    const size_t start = static_cast<size_t>(in.CurrentPosition());
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (start == bytes.size()) return "";
      return absl::StrCat(where("?", start), ": not a field tag");
    }
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    const FieldDescriptor* field = type->FindFieldByNumber(number);
    std::string name = field == nullptr ? absl::StrCat("field ", number) : field->name();
    if (field != nullptr && field->is_repeated()) absl::StrAppend(&name, "[", seen[number]++, "]");
    const bool delimited =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    const bool nested = field != nullptr && delimited &&
                        (field->type() == FieldDescriptor::TYPE_STRING ||
                         field->type() == FieldDescriptor::TYPE_MESSAGE);
    if (!nested) {
      if (!WireFormatLite::SkipField(&in, tag))
        return absl::StrCat(where(name, start), ": cut short");
      continue;
    }
    uint32_t length = 0;
    std::string payload;
    if (!in.ReadVarint32(&length))
      return absl::StrCat(where(name, start), ": cut short in its length");
    const size_t left = bytes.size() - static_cast<size_t>(in.CurrentPosition());
    if (length > left || !in.ReadString(&payload, static_cast<int>(length))) {
      return absl::StrCat(where(name, start), ": cut short (", length, " bytes announced, ", left,
                          " left)");
    }
    const size_t payload_at = static_cast<size_t>(in.CurrentPosition()) - payload.size();
    if (field->type() == FieldDescriptor::TYPE_STRING) {
      if (std::optional<size_t> bad = FirstInvalidUtf8(payload)) {
        return absl::StrCat(where(name, payload_at + *bad), ": not UTF-8");
      }
      continue;
    }
    std::string inner = LocateWireProblemIn(payload, field->message_type(),
                                            path.empty() ? name : absl::StrCat(path, ".", name),
                                            offset + payload_at, depth + 1);
    if (!inner.empty()) return inner;
  }
}

// JSON nested deeper than this is refused before protobuf's parser sees it: its time grows
// faster than quadratically with the depth (100k levels ran for minutes), and past about 100
// messages it refuses them anyway, without saying where. Captures need far less:
// an FX argument list is three levels per nesting, 30 deep within 100 levels.
constexpr int kMaxJsonDepth = 200;

// Where the JSON first nests past kMaxJsonDepth, as a field path ("compiles[0].metrics.a[0]…"),
// or nullopt when it never does. A linear scan: strings skipped, keys and indexes tracked.
std::optional<std::string> DeepJsonPath(absl::string_view json) {
  struct Level {
    bool array;
    size_t index = 0;
    std::string key;
  };
  std::vector<Level> stack;
  std::string last_string;
  bool in_string = false, escaped = false;
  size_t string_start = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        last_string =
            std::string(json.substr(string_start, std::min<size_t>(i - string_start, 64)));
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        string_start = i + 1;
        break;
      case ':':
        if (!stack.empty() && !stack.back().array) stack.back().key = last_string;
        break;
      case ',':
        if (!stack.empty() && stack.back().array) ++stack.back().index;
        break;
      case '[':
      case '{':
        stack.push_back(Level{c == '[', 0, ""});
        if (static_cast<int>(stack.size()) > kMaxJsonDepth) {
          std::string path;
          constexpr size_t kShown = 6;  // the path's first levels name the field; the rest repeat
          for (size_t l = 0; l + 1 < stack.size() && l < kShown; ++l) {
            if (stack[l].array) {
              absl::StrAppend(&path, "[", stack[l].index, "]");
            } else if (!stack[l].key.empty()) {
              absl::StrAppend(&path, path.empty() ? "" : ".", stack[l].key);
            }
          }
          if (stack.size() > kShown + 1) absl::StrAppend(&path, "…");
          return path.empty() ? "the document" : path;
        }
        break;
      case ']':
      case '}':
        if (!stack.empty()) stack.pop_back();
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string LocateWireProblem(absl::string_view bytes, const Descriptor* type) {
  return LocateWireProblemIn(bytes, type, "", 0, 1);
}

absl::StatusOr<v1::SessionCapture> ParseCaptureJson(absl::string_view json) {
  if (std::optional<std::string> deep = DeepJsonPath(json)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a capture: ", *deep, ": JSON nested more than ", kMaxJsonDepth, " levels deep"));
  }
  v1::SessionCapture capture;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a misspelt field is an error, not silently nothing
  absl::Status status = FromProtobufStatus(
      google::protobuf::util::JsonStringToMessage(std::string(json), &capture, options),
      "not a capture");
  if (!status.ok() && absl::StrContains(status.message(), "UTF-8")) {
    // protobuf's parser does not say where; the first bad byte is where.
    if (std::optional<size_t> bad = FirstInvalidUtf8(json)) {
      const absl::string_view before = json.substr(0, *bad);
      const size_t line_start = before.rfind('\n');
      return absl::InvalidArgumentError(absl::StrCat(
          status.message(), " (byte ", *bad, ", line ",
          std::count(before.begin(), before.end(), '\n') + 1, ", column ",
          *bad - (line_start == absl::string_view::npos ? 0 : line_start + 1) + 1, ")"));
    }
  }
  CL_RETURN_IF_ERROR(status);
  return capture;
}

absl::StatusOr<v1::SessionCapture> ParseCaptureBinary(absl::string_view bytes) {
  v1::SessionCapture capture;
  if (!capture.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    const std::string where = LocateWireProblem(bytes, v1::SessionCapture::descriptor());
    return absl::InvalidArgumentError(
        absl::StrCat("not a capture: the bytes are not a SessionCapture protobuf",
                     where.empty() ? "" : ": ", where));
  }
  return capture;
}

absl::StatusOr<v1::SessionCapture> LoadCapture(absl::string_view bytes, CaptureFormat format,
                                               absl::string_view name) {
  absl::StatusOr<v1::SessionCapture> capture =
      format == CaptureFormat::kJson ? ParseCaptureJson(bytes) : ParseCaptureBinary(bytes);
  absl::Status status = capture.status();
  if (status.ok()) status = CheckSchema(capture->schema());
  if (status.ok()) status = ValidateCapture(*capture);
  if (!status.ok()) return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
  return capture;
}

absl::StatusOr<v1::SessionCapture> ReadCaptureFile(const std::string& path) {
  CL_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  const CaptureFormat format =
      absl::EndsWith(path, ".pb") ? CaptureFormat::kBinary : CaptureFormat::kJson;
  return LoadCapture(bytes, format, path);
}

absl::StatusOr<std::string> CaptureToJson(const v1::SessionCapture& capture) {
  return ToDeterministicJson(capture, CaptureJsonOptions());
}

namespace {

// A file descriptor as a ZeroCopyOutputStream that writes 1 MiB at a time. protobuf 3.21's
// FileOutputStream takes a block size but writes 8 KiB at a time whatever it is given: 19,000
// write()s for a 159 MB .cls.json.
class FileOutput final : public google::protobuf::io::CopyingOutputStream {
 public:
  FileOutput(int fd, const std::string& path) : fd_(fd), path_(path) {}

  bool Write(const void* buffer, int size) override {
    written_ = WriteAll(fd_, path_, absl::string_view(static_cast<const char*>(buffer), size));
    return written_.ok();
  }

  google::protobuf::io::ZeroCopyOutputStream* stream() { return &stream_; }

  // Appends the whole of the file `from` (read from its start) after what was written so far, by
  // copy_file_range: the kernel moves the pages, where reading them out and writing them back
  // would copy each twice more. False where the kernel would not (nothing was appended then) or
  // when a write failed (written_ says so).
  bool AppendWithKernel(int from) {
    if (!stream_.Flush()) return false;
    loff_t at = 0;
    for (;;) {
      const ssize_t n = copy_file_range(from, &at, fd_, nullptr, size_t{1} << 30, 0);
      if (n == 0) return true;
      if (n > 0 || errno == EINTR) continue;
      if (at == 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
                      errno == EBADF))
        return false;
      written_ = absl::DataLossError(absl::StrCat(path_, ": write failed: ", std::strerror(errno)));
      return false;
    }
  }
  bool failed() const { return !written_.ok(); }
  // DATA_LOSS naming the path and the reason, unless every byte reached the file.
  absl::Status Flush() {
    if (!stream_.Flush() && written_.ok()) return absl::DataLossError(path_ + ": write failed");
    return written_;
  }

 private:
  const int fd_;
  const std::string& path_;
  absl::Status written_;
  google::protobuf::io::CopyingOutputStreamAdaptor stream_{this, 1 << 20};
};

// An unnamed file for the text of a capture's graphs (or records) until the capture is printed: in
// the output's folder (O_TMPFILE), where it can take the room the output will, else in TMPDIR.
// Closed, and gone, when this is.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& beside) {
    const std::filesystem::path dir = std::filesystem::path(beside).parent_path();
    fd_ = open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      if (std::FILE* f = std::tmpfile()) {
        fd_ = dup(fileno(f));
        std::fclose(f);
      }
    }
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }

  // Copies the whole file to `out`.
  bool CopyTo(google::protobuf::io::ZeroCopyOutputStream* out) const {
    if (lseek(fd_, 0, SEEK_SET) != 0) return false;
    for (;;) {
      void* data;
      int size;
      if (!out->Next(&data, &size)) return false;
      const ssize_t n = read(fd_, data, static_cast<size_t>(size));
      if (n < 0 && errno == EINTR) {
        out->BackUp(size);
        continue;
      }
      if (n <= 0) {
        out->BackUp(size);
        return n == 0;
      }
      if (n < size) out->BackUp(size - static_cast<int>(n));
    }
  }

 private:
  int fd_ = -1;
};

}  // namespace

absl::Status WriteCaptureFile(const std::string& path, const v1::SessionCapture& capture) {
  // Written to the file as it is encoded: a capture with its log's texts is hundreds of megabytes
  // as JSON, which a string of it would hold once more in memory.
  return WriteFileWith(path, [&](int fd) {
    FileOutput file(fd, path);
    absl::Status status = absl::OkStatus();
    if (absl::EndsWith(path, ".pb")) {
      if (!capture.SerializeToZeroCopyStream(file.stream()))
        status = absl::InternalError(absl::StrCat(path, ": capture does not serialize"));
    } else {
      status = WriteDeterministicJson(capture, CaptureJsonOptions(), file.stream());
    }
    CL_RETURN_IF_ERROR(file.Flush());  // a failed write is why, not the serialization
    return status;
  });
}

absl::StatusOr<v1::SessionCapture> WriteCaptureJsonAsMade(
    const std::string& path,
    absl::FunctionRef<absl::StatusOr<v1::SessionCapture>(const CaptureSinks& sinks)> make) {
  const google::protobuf::util::JsonPrintOptions options = CaptureJsonOptions();
  ScratchFile graphs_scratch(path), records_scratch(path);
  if (!CanPrintProtoJson(v1::SessionCapture::descriptor(), options) || graphs_scratch.fd() < 0 ||
      records_scratch.fd() < 0) {
    // Made whole, then written.
    absl::StatusOr<v1::SessionCapture> made = make(CaptureSinks());
    if (made.ok()) CL_RETURN_IF_ERROR(WriteCaptureFile(path, *made));
    return made;
  }
  const std::string graphs_name = absl::StrCat(path, " (its graphs, until written)");
  const std::string records_name = absl::StrCat(path, " (its records, until written)");
  FileOutput graphs(graphs_scratch.fd(), graphs_name);
  FileOutput records(records_scratch.fd(), records_name);
  ProtoJsonElementPrinter graph_printer(options, graphs.stream());
  ProtoJsonElementPrinter record_printer(options, records.stream());
  bool printed = true;
  CaptureSinks sinks;
  sinks.graph = [&](const v1::Graph& graph) { printed = graph_printer.Print(graph) && printed; };
  sinks.record = [&](const v1::Record& record) {
    printed = record_printer.Print(record) && printed;
  };
  absl::StatusOr<v1::SessionCapture> made = make(sinks);
  if (!made.ok()) return made.status();
  CL_RETURN_IF_ERROR(graphs.Flush());
  CL_RETURN_IF_ERROR(records.Flush());
  if (!printed) return absl::DataLossError(path + ": a scratch file's write failed");
  const int graphs_sunk = graph_printer.printed(), records_sunk = record_printer.printed();
  CL_RETURN_IF_ERROR(WriteFileWith(path, [&](int fd) -> absl::Status {
    FileOutput file(fd, path);
    const google::protobuf::Descriptor* capture = v1::SessionCapture::descriptor();
    // The sunk graphs are still in the capture, without their nodes; the sunk records are not.
    // Each scratch file's text appended by the kernel, else read and written here. (Named: a
    // splice holds a FunctionRef, which must not outlive what it refers to.)
    const auto copy = [&](const ScratchFile& scratch,
                          google::protobuf::io::ZeroCopyOutputStream* out) {
      if (file.AppendWithKernel(scratch.fd())) return true;
      return !file.failed() && scratch.CopyTo(out);
    };
    const auto copy_graphs = [&](google::protobuf::io::ZeroCopyOutputStream* out) {
      return copy(graphs_scratch, out);
    };
    const auto copy_records = [&](google::protobuf::io::ZeroCopyOutputStream* out) {
      return copy(records_scratch, out);
    };
    const ProtoJsonSplice splices[] = {
        {capture->FindFieldByNumber(v1::SessionCapture::kGraphsFieldNumber), graphs_sunk,
         graphs_sunk, copy_graphs},
        {capture->FindFieldByNumber(v1::SessionCapture::kRecordsFieldNumber), records_sunk, 0,
         copy_records},
    };
    const bool ok = PrintProtoJsonSpliced(*made, options, splices, file.stream());
    CL_RETURN_IF_ERROR(file.Flush());  // a failed write is why, not the printing
    if (!ok) return absl::DataLossError(absl::StrCat(path, ": the scratch files did not copy"));
    return absl::OkStatus();
  }));
  return made;
}

absl::StatusOr<v1::SessionCapture> WriteCaptureAsMade(
    const std::string& path,
    absl::FunctionRef<absl::StatusOr<v1::SessionCapture>(const CaptureSinks& sinks)> make) {
  return absl::EndsWith(path, ".pb") ? WriteCapturePbAsMade(path, make)
                                     : WriteCaptureJsonAsMade(path, make);
}

absl::StatusOr<v1::SessionCapture> WriteCapturePbAsMade(
    const std::string& path,
    absl::FunctionRef<absl::StatusOr<v1::SessionCapture>(const CaptureSinks& sinks)> make) {
  using google::protobuf::internal::WireFormatLite;
  constexpr uint32_t kGraphTag = WireFormatLite::MakeTag(v1::SessionCapture::kGraphsFieldNumber,
                                                         WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  constexpr uint32_t kRecordTag = WireFormatLite::MakeTag(
      v1::SessionCapture::kRecordsFieldNumber, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  absl::StatusOr<v1::SessionCapture> made = absl::UnknownError("not made");
  CL_RETURN_IF_ERROR(WriteFileWith(path, [&](int fd) -> absl::Status {
    FileOutput file(fd, path);
    absl::Status status;
    {
      google::protobuf::io::CodedOutputStream out(file.stream());
      // A repeated field's items may come anywhere in a message's encoding, each field's in their
      // order: each graph and record is written as one item as it comes.
      const auto write_item = [&](uint32_t tag, const google::protobuf::MessageLite& item) {
        out.WriteTag(tag);
        out.WriteVarint32(static_cast<uint32_t>(item.ByteSizeLong()));
        item.SerializeWithCachedSizes(&out);
      };
      int graphs_sunk = 0;
      CaptureSinks sinks;
      sinks.graph = [&](const v1::Graph& graph) {
        write_item(kGraphTag, graph);
        ++graphs_sunk;
      };
      sinks.record = [&](const v1::Record& record) { write_item(kRecordTag, record); };
      made = make(sinks);
      if (!made.ok()) return made.status();
      // The graphs the sink was not given, then everything else (the records it was not given
      // among it, after the ones it was).
      google::protobuf::RepeatedPtrField<v1::Graph> graphs;
      made->mutable_graphs()->Swap(&graphs);
      for (int i = graphs_sunk; i < graphs.size(); ++i) write_item(kGraphTag, graphs.Get(i));
      if (!made->SerializeToCodedStream(&out))
        status = absl::InternalError(absl::StrCat(path, ": capture does not serialize"));
      made->mutable_graphs()->Swap(&graphs);
    }
    CL_RETURN_IF_ERROR(file.Flush());
    return status;
  }));
  return made;
}

}  // namespace cl
