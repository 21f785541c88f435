// What cl-client accepts as a session: a capture file (.cls.json / .cls.pb), or a TORCH_TRACE log
// (.log, .log.gz) or directory, imported here. Session facts the log cannot know (the GPU the
// report should model, fleet labels, the torch version) come from the command line.
#ifndef CLIENT_INPUTS_H_
#define CLIENT_INPUTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/torch_trace/importer.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

class LoweredFacts;  // analyzers/lowered_facts.h

struct SessionOverrides {
  std::string id, gpu, torch_version, python_version, host, project_root;
  std::map<std::string, std::string> labels;
};

struct InputOptions {
  ImportOptions import;
  SessionOverrides overrides;
  std::optional<int> rank;  // of a multi-rank directory; default: the lowest rank
  // Set (with GraphNodes::kLoweredOnly), a log's lowered graphs are kept here as what the passes
  // read of them (ImportOptions::lowered_sink), not as nodes: for an analysis of that one log,
  // here. A directory of several ranks' logs and capture files keep their nodes.
  LoweredFacts* lowered_facts = nullptr;
};

// Loads or imports `path` and applies the overrides. For a multi-rank directory, the capture of
// the chosen rank (which carries every rank's digest).
absl::StatusOr<v1::SessionCapture> LoadSession(const std::string& path,
                                               const InputOptions& options);

// Applies the non-empty overrides to `capture`'s session.
void ApplyOverrides(const SessionOverrides& overrides, v1::SessionCapture* capture);

// Parses "FROM=TO" / "key=value" flag values.
absl::StatusOr<std::pair<std::string, std::string>> SplitAssignment(const std::string& text,
                                                                    const std::string& flag);

}  // namespace cl

#endif  // CLIENT_INPUTS_H_
