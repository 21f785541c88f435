// Which graphs the IR diff compares: per frame, one stage and one compile on each side.
//
// Frames are matched across the two captures by what the code object is: (name, file relative to
// the project root, first line), never by frame id, which only counts compiles in order. For a
// frame on both sides the diff takes the most-lowered stage both sides have (post-grad, else AOT,
// else pre-grad, else dynamo: the most-lowered graph is the one closest to what runs), and on each
// side the frame's first compile (lowest frame_compile_id, then attempt) that has a graph of that
// stage. Recompiles of a frame mostly repeat its first graph with other sizes; diffing every one
// would report the same change once per recompile.
//
// A compile can have several graphs of one stage (AOT forward and backward, the post-grad graph of
// each); they are paired by stage and order, and a graph without a partner is diffed against
// nothing (all its nodes added or removed).
#ifndef ANALYZERS_IR_DIFF_PLAN_H_
#define ANALYZERS_IR_DIFF_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

struct GraphPairing {
  const v1::Graph* base = nullptr;  // null: the head graph has no base partner
  const v1::Graph* head = nullptr;  // null: the base graph has no head partner
};

struct FramePlan {
  std::string name;  // the code object's name
  std::string file;  // relative to the project root
  uint32_t line = 0;
  std::string stage;  // "POST_GRAD", "AOT_FORWARD+AOT_BACKWARD"; empty: nothing to diff (see note)
  std::string base_compile;
  std::string head_compile;
  std::vector<GraphPairing> graphs;
  std::string note;
};

struct IrDiffPlan {
  std::vector<FramePlan> frames;  // frames on both sides, in the head's order
  // Frames that only one side compiled, as "name (file:line)".
  std::vector<std::string> only_in_base;
  std::vector<std::string> only_in_head;
};

IrDiffPlan PlanIrDiff(const v1::SessionCapture& base, const v1::SessionCapture& head);

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_PLAN_H_
