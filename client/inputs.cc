#include "client/inputs.h"

#include "absl/strings/str_cat.h"
#include "analyzers/lowered_facts.h"
#include "capture/capture_io.h"
#include "capture/validate.h"
#include "common/status_macros.h"

namespace cl {

void ApplyOverrides(const SessionOverrides& o, v1::SessionCapture* capture) {
  v1::Session* s = capture->mutable_session();
  if (!o.id.empty()) s->set_id(o.id);
  if (!o.gpu.empty()) s->set_gpu(o.gpu);
  if (!o.torch_version.empty()) s->set_torch_version(o.torch_version);
  if (!o.python_version.empty()) s->set_python_version(o.python_version);
  if (!o.host.empty()) s->set_host(o.host);
  if (!o.project_root.empty()) s->set_project_root(o.project_root);
  for (const auto& [k, v] : o.labels) (*s->mutable_labels())[k] = v;
}

absl::StatusOr<v1::SessionCapture> LoadSession(const std::string& path,
                                               const InputOptions& options) {
  v1::SessionCapture capture;
  if (!IsTraceInput(path)) {
    CL_ASSIGN_OR_RETURN(capture, ReadCaptureFile(path));
  } else {
    ImportOptions import = options.import;
    if (options.lowered_facts != nullptr) import.lowered_sink = options.lowered_facts->Sink();
    CL_ASSIGN_OR_RETURN(std::vector<v1::SessionCapture> ranks, ImportTrace(path, import));
    size_t pick = 0;
    if (options.rank) {
      pick = ranks.size();
      for (size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i].session().rank() == *options.rank) pick = i;
      }
      if (pick == ranks.size()) {
        return absl::NotFoundError(absl::StrCat(path, ": no log of rank ", *options.rank));
      }
    }
    capture = std::move(ranks[pick]);
    // The importer's output must satisfy what every other input is checked for.
    if (absl::Status s = ValidateCapture(capture); !s.ok()) {
      return absl::InternalError(
          absl::StrCat(path, ": the imported capture is inconsistent: ", s.message()));
    }
  }
  ApplyOverrides(options.overrides, &capture);
  return capture;
}

absl::StatusOr<std::pair<std::string, std::string>> SplitAssignment(const std::string& text,
                                                                    const std::string& flag) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " takes KEY=VALUE, not \"", text, "\""));
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

}  // namespace cl
