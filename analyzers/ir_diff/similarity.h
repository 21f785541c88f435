// How alike a base node and a head node are, given the pairs matched so far.
//
// The graph matcher (graph_matcher.h) uses NodeSimilarity to pair the nodes that neither an anchor
// nor propagation could pair, and PairAgreement to give every pair its confidence. Both look at
// the same evidence: the node's target, its source site and line (after the shift an edit above
// it made: graph_line_shift.h), its module path, and its
// neighbourhood: how many of its operands and users are paired with the other node's operands and
// users. NodeSimilarity also weighs what the node carries itself (literals, tensor meta), because
// among candidates those tell `mul(x, 0.5)` from `mul(x, 0.7071)`; PairAgreement does not,
// because a confidently paired node whose shape changed is exactly what the diff reports.
#ifndef ANALYZERS_IR_DIFF_SIMILARITY_H_
#define ANALYZERS_IR_DIFF_SIMILARITY_H_

#include "analyzers/ir_diff/correspondence.h"
#include "analyzers/ir_diff/index.h"
#include "analyzers/ir_diff/line_shift.h"

namespace cl {

// In [0, 1]: 1 when everything agrees.
double NodeSimilarity(const GraphIndex& base, int b, const GraphIndex& head, int h,
                      const NodeCorrespondence& pairs, const LineShifts& shifts);

// In [0, 1]: the share of the pairing evidence (target, source, module path, operands, users)
// that agrees.
double PairAgreement(const GraphIndex& base, int b, const GraphIndex& head, int h,
                     const NodeCorrespondence& pairs, const LineShifts& shifts);

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_SIMILARITY_H_
