// The tensor metadata in FX's verbose annotations (`"f32[s0, 64][64, 1]cpu"`), for the FX text
// parser (fx_graph.h).
#ifndef CAPTURE_TORCH_TRACE_FX_META_H_
#define CAPTURE_TORCH_TRACE_FX_META_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl::fx {

namespace v1 = ::compile_lens::v1;

// Reads an annotation, without its quotes, into `meta`: "f32[s0, 64][64, 1]cpu", "f32[16, 256]"
// (no stride or device), "Sym(s0)" (a SymInt: dtype "Sym", sym_expr "s0", no shape), and for
// several outputs "(f32[2][1]cpu, i64[2][1]cpu)", of which the first is kept. False for anything
// else, with `meta` perhaps partly set (callers clear it). `scratch` is reused from call to call.
// With `layout` false, the stride, the device and a SymInt's expression are read but not kept.
bool ParseMeta(absl::string_view ann, v1::TensorMeta* meta, std::vector<absl::string_view>* scratch,
               bool layout = true);

}  // namespace cl::fx

#endif  // CAPTURE_TORCH_TRACE_FX_META_H_
