# cmake -DPB_CC=<file>.pb.cc -P lazy_descriptors.cmake
#
# protoc's C++ registers each .proto file's descriptor with protobuf's generated pool before main
# (an AddDescriptorsRunner, a static initializer): protobuf parses the whole FileDescriptorProto
# to index its symbols, for capture.proto and report.proto a fifth of a cl-client run on a small
# log (bench/README.md, "Every log of the corpus"). The same registration also happens on first
# use: a message's descriptor(), GetDescriptor() or GetReflection() calls AssignDescriptors, which
# adds the file and its imports under protobuf's own mutex. So the static initializer is taken out
# and a file is registered when something reflects on one of its messages. What looks a name up in
# the generated pool without having touched a message of that file first must register it first:
# cl::RegisterProtoFiles (proto/register_files.h), which cl-server calls for gRPC's reflection.
#
# The line is protobuf 3.21's (Debian bookworm's); if protoc writes something else the build stops
# here rather than leave a file half-rewritten.
if(NOT PB_CC)
  message(FATAL_ERROR "lazy_descriptors.cmake: PB_CC is not set")
endif()
file(READ "${PB_CC}" text)
set(runner_re "PROTOBUF_ATTRIBUTE_INIT_PRIORITY2 static ::_pbi::AddDescriptorsRunner dynamic_init_dummy_[A-Za-z0-9_]+\\(&descriptor_table_[A-Za-z0-9_]+\\);")
string(REGEX MATCHALL "${runner_re}" runners "${text}")
list(LENGTH runners count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "lazy_descriptors.cmake: ${PB_CC} has ${count} AddDescriptorsRunner lines, "
                      "not one: protoc's output is not protobuf 3.21's")
endif()
string(REGEX REPLACE "${runner_re}"
       "// Registered on first use, not before main: proto/lazy_descriptors.cmake." text "${text}")
file(WRITE "${PB_CC}" "${text}")
