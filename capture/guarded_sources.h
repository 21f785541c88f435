// The sources a compile's guards read, in either of the capture's two forms: listed on the compile
// (Compile.guarded_sources, as 0.5.0 captures hold them) or as indexes into its frame's table
// (Compile.guarded_source_ids into Frame.guarded_sources, as the importer writes them since 0.5.1,
// so that a frame's recompiles share the text of the sources they all guard).
#ifndef CAPTURE_GUARDED_SOURCES_H_
#define CAPTURE_GUARDED_SOURCES_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

// How many sources the compile's guards read; 0 when the log recorded no guard tree for it.
inline int GuardedSourceCount(const compile_lens::v1::Compile& compile) {
  return compile.guarded_sources_size() + compile.guarded_source_ids_size();
}

// The sources themselves, the listed ones first. `frame` is the compile's frame; an id outside its
// table (which validation refuses) or with no frame reads as nothing.
inline std::vector<absl::string_view> GuardedSources(const compile_lens::v1::Frame* frame,
                                                     const compile_lens::v1::Compile& compile) {
  std::vector<absl::string_view> out(compile.guarded_sources().begin(),
                                     compile.guarded_sources().end());
  if (frame == nullptr) return out;
  for (uint32_t id : compile.guarded_source_ids()) {
    if (id < static_cast<uint32_t>(frame->guarded_sources_size()))
      out.push_back(frame->guarded_sources(static_cast<int>(id)));
  }
  return out;
}

}  // namespace cl

#endif  // CAPTURE_GUARDED_SOURCES_H_
