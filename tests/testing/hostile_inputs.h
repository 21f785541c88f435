// Small inputs that once took cl-server down (issue 21), shared by the tests that prove they no
// longer do (tests/e2e/hostile_server_test.cc) and the benchmark that measures what they cost now
// (bench/load, phase amplify).
#ifndef TESTS_TESTING_HOSTILE_INPUTS_H_
#define TESTS_TESTING_HOSTILE_INPUTS_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace cl::testing {

// A TORCH_TRACE log whose str table interns one `name_bytes`-long file name, then `starts`
// compiles of distinct frames whose dynamo_start stacks name it by index: a few bytes a record,
// each of which once copied the whole name into its frame.
std::string StrTableAmplifier(size_t name_bytes, int starts);

// The first message of every Analyze call, serialized: the options, and nothing else.
std::string OptionsOnlyMessage();

// The UTF-8 bytes of code point `cp`, surrogates included (which are then not valid UTF-8): for
// texts that hold every code point, and for decoding numeric character references.
std::string CodePointBytes(uint32_t cp);

}  // namespace cl::testing

#endif  // TESTS_TESTING_HOSTILE_INPUTS_H_
