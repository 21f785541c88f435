// What the capture of one log keeps in memory, by part: imports LOG as `cl-client analyze` does
// (GraphNodes::kLoweredOnly, sources not read), or with --all as `import-trace` does (every
// graph's nodes, the records listed), and prints the SpaceUsedLong of each part, totals and per
// compile. The figures behind bench/README.md's "Scale"; a measurement, not a test.
//
// Usage: capture_space [--all] LOG
#include <cstdio>
#include <string>

#include "capture/torch_trace/importer.h"
#include "compile_lens/v1/capture.pb.h"

namespace {

namespace v1 = ::compile_lens::v1;

template <typename Repeated>
size_t SpaceOf(const Repeated& items) {
  size_t bytes = 0;
  for (const auto& item : items) bytes += item.SpaceUsedLong();
  return bytes;
}

void Row(const char* part, size_t bytes, int compiles) {
  std::printf("%-34s %10.2f MB %9.1f KB/compile\n", part, bytes / 1e6,
              compiles > 0 ? bytes / 1e3 / compiles : 0.0);
}

// The bytes one value of a number field takes in a repeated field.
size_t ScalarBytes(const google::protobuf::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case google::protobuf::FieldDescriptor::CPPTYPE_INT64:
    case google::protobuf::FieldDescriptor::CPPTYPE_UINT64:
    case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE:
      return 8;
    case google::protobuf::FieldDescriptor::CPPTYPE_BOOL:
      return 1;
    default:
      return 4;
  }
}

// Each field of Compile, summed over the capture's compiles: messages by SpaceUsedLong, strings by
// their size, repeated numbers (guarded_source_ids) by their values' size.
void CompileFields(const v1::SessionCapture& c) {
  const google::protobuf::Descriptor* d = v1::Compile::descriptor();
  const google::protobuf::Reflection* r = v1::Compile::GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    size_t bytes = 0;
    for (const v1::Compile& compile : c.compiles()) {
      const bool message = f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE;
      const bool string = f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING;
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(compile, f); ++k) {
          if (message) bytes += r->GetRepeatedMessage(compile, f, k).SpaceUsedLong();
          if (string) bytes += sizeof(std::string) + r->GetRepeatedString(compile, f, k).size();
        }
        if (!message && !string) bytes += r->FieldSize(compile, f) * ScalarBytes(f);
      } else if (message && r->HasField(compile, f)) {
        bytes += r->GetMessage(compile, f).SpaceUsedLong();
      } else if (string) {
        bytes += r->GetString(compile, f).size();
      }
    }
    if (bytes >= 100000) Row(("  compiles' " + f->name()).c_str(), bytes, c.compiles_size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool all = argc == 3 && std::string(argv[1]) == "--all";
  if (argc != 2 && !all) {
    std::fprintf(stderr, "usage: capture_space [--all] LOG\n");
    return 2;
  }
  const char* log = argv[argc - 1];
  cl::ImportOptions options;
  options.read_sources = false;
  options.graph_nodes = all ? cl::GraphNodes::kAll : cl::GraphNodes::kLoweredOnly;
  absl::StatusOr<v1::SessionCapture> capture = cl::ImportTraceFile(log, options);
  if (!capture.ok()) {
    std::fprintf(stderr, "capture_space: %s\n", capture.status().ToString().c_str());
    return 1;
  }
  const v1::SessionCapture& c = *capture;
  const int compiles = c.compiles_size();
  size_t graph_nodes = 0, graphs_with_nodes = 0, nodes = 0;
  for (const v1::Graph& g : c.graphs()) {
    if (g.nodes_size() == 0) continue;
    ++graphs_with_nodes;
    nodes += g.nodes_size();
    for (const v1::Node& n : g.nodes()) graph_nodes += n.SpaceUsedLong();
  }
  std::printf("%s: %d frames, %d compiles, %d graphs (%zu with their %zu nodes kept)\n", log,
              c.frames_size(), compiles, c.graphs_size(), graphs_with_nodes, nodes);
  Row("whole capture", c.SpaceUsedLong(), compiles);
  Row("graphs' nodes", graph_nodes, compiles);
  Row("graphs, less their nodes", SpaceOf(c.graphs()) - graph_nodes, compiles);
  Row("compiles", SpaceOf(c.compiles()), compiles);
  CompileFields(c);
  Row("kernels", SpaceOf(c.kernels()), compiles);
  Row("frames", SpaceOf(c.frames()), compiles);
  Row("extras (capped)", SpaceOf(c.extras()), compiles);
  Row("records", SpaceOf(c.records()), compiles);
  Row("diagnostics", SpaceOf(c.diagnostics()), compiles);
  return 0;
}
