#include "analyzers/runtime/divergence.h"

#include <algorithm>
#include <vector>

namespace cl {
namespace {

bool Diverged(const v1::DivergenceLayer& layer) {
  return layer.diverged() || layer.nan() || layer.inf();
}

v1::DivergenceSection::Severity SeverityOf(const v1::BisectCulprit& culprit) {
  if (culprit.kind() == v1::BisectCulprit::CONFIG) {
    if (culprit.name() == "fallback_random") return v1::DivergenceSection::INFO;
    if (culprit.name() == "emulate_precision_casts") return v1::DivergenceSection::LOW;
  }
  return v1::DivergenceSection::ERROR;
}

}  // namespace

absl::Status DivergencePass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  v1::DivergenceSection* section = out->mutable_divergence();
  if (!in.head.has_divergence()) {
    section->set_status(v1::SKIPPED);
    section->set_reason("no divergence check in this capture (run compile_lens.check_divergence)");
    return absl::OkStatus();
  }
  const v1::Divergence& divergence = in.head.divergence();
  std::vector<const v1::DivergenceLayer*> layers;
  for (const v1::DivergenceLayer& layer : divergence.layers()) layers.push_back(&layer);
  std::stable_sort(layers.begin(), layers.end(),
                   [](const v1::DivergenceLayer* a, const v1::DivergenceLayer* b) {
                     return a->order() < b->order();
                   });

  section->set_status(v1::OK);
  section->set_layers_compared(static_cast<uint32_t>(layers.size()));
  *section->mutable_steps() = divergence.bisect().steps();
  auto first = std::find_if(layers.begin(), layers.end(),
                            [](const v1::DivergenceLayer* l) { return Diverged(*l); });
  if (first == layers.end()) return absl::OkStatus();

  const v1::DivergenceLayer& layer = **first;
  section->set_first_divergent_layer(layer.name());
  section->set_max_abs_diff(layer.max_abs_diff());
  section->set_accumulated_max_abs_diff(layer.accumulated_max_abs_diff());
  section->set_tolerance(layer.tolerance());
  section->set_noise_floor(layer.noise_floor());
  if (divergence.bisect().has_culprit()) *section->mutable_cause() = divergence.bisect().culprit();
  section->set_severity(SeverityOf(divergence.bisect().culprit()));
  return absl::OkStatus();
}

}  // namespace cl
