// The bare gRPC streaming echo cl-load measures cl-server against: it reads every message of a
// stream and answers with all of their bytes in one message, which is what a server that only
// receives the session, and returns as much, costs in gRPC alone. cl-load runs it as it runs
// cl-server, as a child process (itself, with --serve_echo), so that both are measured alike.
#ifndef BENCH_LOAD_ECHO_SERVER_H_
#define BENCH_LOAD_ECHO_SERVER_H_

#include <string>

namespace cl::load {

// Serves on `listen` (HOST:PORT) until killed, announcing the bound address on stderr as
// cl-server does ("cl-server: listening on HOST:PORT"), so that one reader starts either server;
// 1 when it cannot listen.
int ServeEcho(const std::string& listen);

}  // namespace cl::load

#endif  // BENCH_LOAD_ECHO_SERVER_H_
