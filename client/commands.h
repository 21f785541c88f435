// cl-client's commands as its help shows them: what each does, the flags it takes, examples.
// main.cc runs them; this is the one place that says which flag belongs to which command, so that
// `cl-client help COMMAND` lists exactly those and a flag given to a command that ignores it is a
// usage error rather than silently dropped.
#ifndef CLIENT_COMMANDS_H_
#define CLIENT_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cl {

struct CommandHelp {
  std::string name;
  std::string synopsis;  // one or more "cl-client NAME ..." lines
  std::string about;     // what it does, in a paragraph or two
  std::vector<std::string> flags;
  std::string examples;
};

// Every command, in the order `cl-client --help` lists them.
const std::vector<CommandHelp>& Commands();

// The command called `name`, or null.
const CommandHelp* FindCommand(absl::string_view name);

// Every flag some command takes (the flags cl-client accepts at all).
bool IsClientFlag(absl::string_view flag);

// `cl-client --help`: the synopsis of every command, the exit codes, where to read more.
std::string OverallHelp();

// `cl-client help NAME`: its synopsis, what it does, its flags (help text and default), examples.
std::string CommandUsage(const CommandHelp& command);

// "0.5.0".
std::string VersionNumber();

// "cl-client 0.5.0 (Release)".
std::string VersionLine();

}  // namespace cl

#endif  // CLIENT_COMMANDS_H_
