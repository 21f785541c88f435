// The translation unit that builds tests/testing/precompiled.h for the suite
// (tests/CMakeLists.txt).
#include "tests/testing/precompiled.h"
