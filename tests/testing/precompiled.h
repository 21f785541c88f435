// The headers nearly every test includes, precompiled once for the whole suite (cl_test in
// tests/CMakeLists.txt): parsing gtest, gmock, gRPC and the generated messages was about 40% of
// each test's compile time. Only third-party and generated headers belong here, none of ours, so
// editing a project header never rebuilds the precompiled one; and none that reads a macro a
// test's own link libraries define (simdjson's, toml++'s), which GCC would refuse to mix.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
