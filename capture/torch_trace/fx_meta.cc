#include "capture/torch_trace/fx_meta.h"

#include <string>

#include "absl/strings/match.h"
#include "capture/torch_trace/fx_scan.h"
#include "capture/torch_trace/fx_text.h"

namespace cl::fx {
namespace {

// Appends the comma-separated dimensions of a shape or stride (`s0, 64`) to `dims`, sized once
// (a repeated field grows 1, 3, 7, ... otherwise). `scratch` is reused.
void AddDims(absl::string_view list, google::protobuf::RepeatedPtrField<std::string>* dims,
             std::vector<absl::string_view>* scratch) {
  if (Strip(list).empty()) return;
  SplitTopLevel(PlainScanner(), list, ',', scratch);
  dims->Reserve(dims->size() + static_cast<int>(scratch->size()));
  for (absl::string_view d : *scratch) Assign(dims->Add(), Strip(d));
}

// Appends the dimensions of a list without brackets or string literals: every comma separates.
void AddFlatDims(absl::string_view list, google::protobuf::RepeatedPtrField<std::string>* dims) {
  if (Strip(list).empty()) return;
  int commas = 0;
  for (const char c : list) commas += c == ',';
  dims->Reserve(dims->size() + commas + 1);
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || list[i] == ',') {
      Assign(dims->Add(), Strip(list.substr(start, i - start)));
      start = i + 1;
    }
  }
}

// Almost every annotation is a plain `f32[2, 16][16, 1]cpu`: a dtype, a shape and maybe a stride
// holding no brackets, literals or parentheses, and a device. Reads such an annotation (already
// stripped) exactly as the general reader in ParseMeta would, and returns false, having set
// nothing, for anything else.
bool ParsePlainMeta(absl::string_view ann, v1::TensorMeta* meta, bool layout) {
  size_t brackets[4];  // the positions of the `[`, `]` (and `[`, `]` of the stride)
  size_t count = 0;
  for (size_t i = 0; i < ann.size(); ++i) {
    const uint8_t cls = ClassOf(ann[i]);
    if (cls == kPlain || cls == kHash) continue;
    if (cls == kQuote || count == 4 || ann[i] != (count % 2 == 0 ? '[' : ']')) return false;
    brackets[count++] = i;
  }
  if (count != 2 && !(count == 4 && brackets[2] == brackets[1] + 1)) return false;
  const absl::string_view dtype = ann.substr(0, brackets[0]);
  if (!IsIdentifier(dtype)) return false;
  Assign(meta->mutable_dtype(), dtype);
  AddFlatDims(ann.substr(brackets[0] + 1, brackets[1] - brackets[0] - 1), meta->mutable_shape());
  if (!layout) return true;
  if (count == 4) {
    AddFlatDims(ann.substr(brackets[2] + 1, brackets[3] - brackets[2] - 1), meta->mutable_stride());
  }
  Assign(meta->mutable_device(), Strip(ann.substr(brackets[count - 1] + 1)));
  return true;
}

}  // namespace

// Annotations are string literals of their statement, so they are scanned on their own.
bool ParseMeta(absl::string_view ann, v1::TensorMeta* meta, std::vector<absl::string_view>* scratch,
               bool layout) {
  const PlainScanner scan;
  ann = Strip(ann);
  if (ParsePlainMeta(ann, meta, layout)) return true;
  for (int i = 0; i < kMaxArgNesting && absl::StartsWith(ann, "("); ++i) {
    if (scan.MatchingClose(ann, 0) != ann.size() - 1) return false;
    const absl::string_view inner = ann.substr(1, ann.size() - 2);
    ann = Strip(inner.substr(0, FindTopLevel(scan, inner, ',')));  // the first output
  }
  if (ann.empty()) return true;  // "()": no outputs, nothing to record
  if (absl::StartsWith(ann, "Sym(")) {
    if (ann.back() != ')') return false;
    meta->set_dtype("Sym");
    if (layout) Assign(meta->mutable_sym_expr(), Strip(ann.substr(4, ann.size() - 5)));
    return true;
  }
  const size_t shape_open = ann.find('[');
  if (shape_open == kNpos || shape_open == 0) return false;
  const absl::string_view dtype = ann.substr(0, shape_open);
  if (!IsIdentifier(dtype)) return false;
  const size_t shape_close = scan.MatchingClose(ann, shape_open);
  if (shape_close == kNpos) return false;
  Assign(meta->mutable_dtype(), dtype);
  AddDims(ann.substr(shape_open + 1, shape_close - shape_open - 1), meta->mutable_shape(), scratch);
  size_t rest = shape_close + 1;
  if (rest < ann.size() && ann[rest] == '[') {
    const size_t stride_close = scan.MatchingClose(ann, rest);
    if (stride_close == kNpos) return false;
    if (layout)
      AddDims(ann.substr(rest + 1, stride_close - rest - 1), meta->mutable_stride(), scratch);
    rest = stride_close + 1;
  }
  if (layout) Assign(meta->mutable_device(), Strip(ann.substr(rest)));
  return true;
}

}  // namespace cl::fx
