#include "service/summary.h"

#include "analyzers/common/restarts.h"

namespace cl {

void FillMetadata(const v1::SessionCapture& head, const v1::SessionCapture* base,
                  v1::AnalysisReport* report) {
  const v1::Session& s = head.session();
  v1::Metadata* m = report->mutable_metadata();
  m->set_schema(head.schema());
  m->set_session_id(s.id());
  m->set_torch_version(s.torch_version());
  m->set_gpu(s.gpu());
  *m->mutable_labels() = s.labels();
  m->set_started_at(s.started_at());
  m->set_python_version(s.python_version());
  m->set_host(s.host());
  m->set_rank(s.rank());
  m->set_world_size(s.world_size());
  m->set_has_base(base != nullptr);
}

void FillRaw(const v1::SessionCapture& head, v1::AnalysisReport* report) {
  v1::RawSection* raw = report->mutable_raw();
  raw->set_schema(head.schema());
  uint32_t recompilations = 0, graph_breaks = 0, compiled_graphs = 0;
  for (const v1::Compile& c : head.compiles()) {
    if (!c.recompile_reasons().empty()) ++recompilations;
    graph_breaks += static_cast<uint32_t>(GraphBreakCount(c));
    // A compile that succeeded produced a graph (each recompile its own).
    if (c.status() == v1::Compile::OK) ++compiled_graphs;
  }
  raw->set_recompilations(recompilations);
  raw->set_compiled_graphs(compiled_graphs);
  raw->set_graph_breaks(graph_breaks);
  raw->set_iterations(static_cast<uint32_t>(head.iterations_size()));
}

}  // namespace cl
