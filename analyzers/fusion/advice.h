// What to change and how to apply it, per fusion pattern: the report's `change` and `how`
// texts (identifiers in backticks, which the HTML shows as code).
#ifndef ANALYZERS_FUSION_ADVICE_H_
#define ANALYZERS_FUSION_ADVICE_H_

#include <string>

#include "analyzers/fusion/patterns.h"

namespace cl {

std::string FusionChange(FusionPattern pattern);
std::string FusionHow(FusionPattern pattern);

}  // namespace cl

#endif  // ANALYZERS_FUSION_ADVICE_H_
