#include "service/render/recompile_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cl {

std::string ObservedValues(const v1::RecompileCluster& cluster) {
  if (!cluster.transitions().empty()) return absl::StrJoin(cluster.transitions(), ", ");
  if (!cluster.guarded_values().empty()) {
    // A symbolic guard's value is its relation ("((1 + step) % 4) != 0"), not a value held.
    const bool relations = cluster.category() == v1::RecompileCategory::SYMBOLIC_SHAPE;
    return absl::StrCat(relations ? "" : "== ", absl::StrJoin(cluster.guarded_values(), ", "));
  }
  if (cluster.category() == v1::RecompileCategory::GLOBAL_STATE) return "changed";
  // An identity guard holds an object's id, which torch prints and which says nothing.
  if (cluster.category() == v1::RecompileCategory::IDENTITY) return "another object";
  return "";
}

}  // namespace cl
