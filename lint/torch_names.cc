#include "lint/torch_names.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace cl::lint {
namespace {

using StringSet = absl::flat_hash_set<absl::string_view>;

const StringSet& ViewOps() {
  static const auto* const kOps = new StringSet{"view",
                                                "view_as",
                                                "expand",
                                                "expand_as",
                                                "transpose",
                                                "t",
                                                "permute",
                                                "narrow",
                                                "select",
                                                "unsqueeze",
                                                "squeeze",
                                                "diagonal",
                                                "as_strided",
                                                "unfold",
                                                "chunk",
                                                "split",
                                                "tensor_split",
                                                "unbind",
                                                "movedim",
                                                "moveaxis",
                                                "flatten",
                                                "reshape",
                                                "detach",
                                                "swapaxes",
                                                "swapdims",
                                                "unflatten",
                                                "broadcast_to",
                                                "view_as_real",
                                                "view_as_complex",
                                                "hsplit",
                                                "vsplit",
                                                "dsplit",
                                                "split_with_sizes",
                                                "T",
                                                "mT",
                                                "H",
                                                "mH",
                                                "real",
                                                "imag",
                                                "data",
                                                "[]",
                                                "iter"};
  return *kOps;
}

const StringSet& SplitOps() {
  static const auto* const kOps = new StringSet{
      "chunk", "split", "tensor_split", "unbind", "hsplit", "vsplit", "dsplit", "split_with_sizes"};
  return *kOps;
}

// Attributes of a tensor that are tensors sharing its storage.
const StringSet& ViewAttributes() {
  static const auto* const kAttrs = new StringSet{"T", "mT", "H", "mH", "real", "imag", "data"};
  return *kAttrs;
}

// Tensor methods and attributes whose result is not a tensor.
const StringSet& NonTensorMembers() {
  static const auto* const kMembers = new StringSet{
      "item",       "tolist",       "size",           "dim",           "numel",
      "stride",     "data_ptr",     "element_size",   "is_contiguous", "is_floating_point",
      "ndimension", "nelement",     "storage_offset", "get_device",    "untyped_storage",
      "numpy",      "is_complex",   "shape",          "ndim",          "dtype",
      "device",     "is_cuda",      "requires_grad",  "layout",        "names",
      "is_leaf",    "grad_fn",      "is_sparse",      "type",          "__len__",
      "is_meta",    "is_quantized", "nbytes",         "itemsize",      "keys",
      "items",      "values",       "register_hook",  "backward",      "is_nonzero",
      "equal"};
  return *kMembers;
}

// torch.* callables that return no tensor.
}  // namespace

bool IsNonTensorTorchCall(absl::string_view callee) {
  static const auto* const kNames = new StringSet{"torch.is_tensor",
                                                  "torch.is_floating_point",
                                                  "torch.is_complex",
                                                  "torch.numel",
                                                  "torch.is_grad_enabled",
                                                  "torch.Size",
                                                  "torch.device",
                                                  "torch.dtype",
                                                  "torch.get_default_dtype",
                                                  "torch.manual_seed",
                                                  "torch.no_grad",
                                                  "torch.enable_grad",
                                                  "torch.set_grad_enabled",
                                                  "torch.inference_mode",
                                                  "torch.compile",
                                                  "torch.is_nonzero",
                                                  "torch.equal",
                                                  "torch.finfo",
                                                  "torch.iinfo",
                                                  "torch.Generator",
                                                  "torch.seed",
                                                  "torch.initial_seed",
                                                  "torch.get_rng_state"};
  static constexpr absl::string_view kPrefixes[] = {
      "torch.cuda.",        "torch.backends.", "torch.compiler.", "torch._dynamo.",  "torch.jit.",
      "torch.distributed.", "torch.utils.",    "torch.library.",  "torch.autograd.", "torch.fx.",
      "torch._inductor.",   "torch.nn.init.",  "torch.optim."};
  if (kNames->contains(callee)) return true;
  for (absl::string_view p : kPrefixes) {
    if (absl::StartsWith(callee, p)) return true;
  }
  // Classes (torch.nn.Linear, torch.Tensor) construct objects, not tensors... except Tensor.
  const size_t dot = callee.rfind('.');
  const absl::string_view last = callee.substr(dot + 1);
  return !last.empty() && absl::ascii_isupper(static_cast<unsigned char>(last[0])) &&
         last != "Tensor";
}

// Constructors of stateful objects whose methods the detectors name through the constructor.
bool IsStatefulConstructor(absl::string_view callee) {
  static const auto* const kNames = new StringSet{"random.Random",
                                                  "random.SystemRandom",
                                                  "numpy.random.default_rng",
                                                  "numpy.random.RandomState",
                                                  "numpy.random.Generator",
                                                  "torch.Generator",
                                                  "torch.cuda.Stream",
                                                  "torch.cuda.Event",
                                                  "torch.Stream",
                                                  "torch.Event",
                                                  "logging.getLogger"};
  return kNames->contains(callee);
}

bool IsViewOp(absl::string_view op) { return ViewOps().contains(op); }

bool IsOverlapOp(absl::string_view op) {
  return op == "expand" || op == "expand_as" || op == "unfold" || op == "as_strided" ||
         op == "broadcast_to";
}

bool IsAmbiguousViewOp(absl::string_view op) {
  return op == "[]" || op == "split" || op == "real" || op == "imag" || op == "data" ||
         op == "iter";
}

bool IsSplitOp(absl::string_view op) { return SplitOps().contains(op); }
bool IsViewAttribute(absl::string_view attr) { return ViewAttributes().contains(attr); }
bool IsNonTensorMember(absl::string_view member) { return NonTensorMembers().contains(member); }

}  // namespace cl::lint
