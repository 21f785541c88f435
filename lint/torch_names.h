// What names in torch's (and Python's) API mean to the scan: which ops make views, which split
// into views, which tensor members are not tensors, which torch.* callables return no tensor, and
// which constructors make stateful objects the detectors name through their constructor.
#ifndef LINT_TORCH_NAMES_H_
#define LINT_TORCH_NAMES_H_

#include "absl/strings/string_view.h"

namespace cl::lint {

// Whether `op` makes a view of its input (view, expand, transpose, permute, narrow, select, ...,
// plus the view attributes T, mT, real, imag, data; "[]" for basic indexing and "iter" for
// iterating a tensor).
bool IsViewOp(absl::string_view op);
// Views that overlap themselves (stride 0 or overlapping windows): writes through them are
// undefined.
bool IsOverlapOp(absl::string_view op);
// View ops Python's own types have too (indexing, str.split, .real): they make a tensor view only
// when the base is known to be a tensor.
bool IsAmbiguousViewOp(absl::string_view op);
// chunk, split, unbind, ...: a tuple of views.
bool IsSplitOp(absl::string_view op);
// T, mT, H, mH, real, imag, data: attributes that are views.
bool IsViewAttribute(absl::string_view attr);
// Tensor methods and attributes whose result is not a tensor (item, size, shape, dtype, ...).
bool IsNonTensorMember(absl::string_view member);
// torch.* callables that return no tensor (torch.is_tensor, torch.cuda.*, classes, ...).
bool IsNonTensorTorchCall(absl::string_view callee);
// Constructors of stateful objects (random.Random, torch.Generator, logging.getLogger, ...).
bool IsStatefulConstructor(absl::string_view callee);

}  // namespace cl::lint

#endif  // LINT_TORCH_NAMES_H_
