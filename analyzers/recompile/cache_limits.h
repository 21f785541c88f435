// Cache-limit hits: frames that reached torch's recompile (cache-size) limit and run eagerly
// after it (docs/torch-semantics.md §1.1 item 4, §1.7), for the recompile section.
#ifndef ANALYZERS_RECOMPILE_CACHE_LIMITS_H_
#define ANALYZERS_RECOMPILE_CACHE_LIMITS_H_

#include <cstdint>
#include <map>
#include <vector>

#include "analyzers/pass.h"
#include "analyzers/recompile/frames.h"

namespace cl {

// The hits, one per frame (or function a message names) and limit, found two ways: (a) torch
// said so: a limit message in a compile's failure, restart or graph-break text, or in an extra
// record that is not generated whole; (b) a frame's cache-entry count reached the limit in its
// dynamo_config. `frames` are the capture's (CollectFrames).
std::vector<v1::CacheLimitHit> FindCacheLimitHits(const v1::SessionCapture& capture,
                                                  const std::map<uint32_t, FrameStats>& frames);

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_CACHE_LIMITS_H_
