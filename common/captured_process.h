// Running a program to its end with both output streams captured: the rank program's JSON
// answers, iproute2's commands. Standard input is /dev/null; the child dies with this process.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace harness {

struct CapturedOutput {
  int exit_code = 0;  // 128 + the signal when one ended it; 127 when it could not start
  std::string out, err;
};

// `program` with a '/' is run as named, else looked up on PATH. std::runtime_error when no
// process can be made (pipe, fork).
CapturedOutput run_captured(const std::string& program, const std::vector<std::string>& args);

// The first line of what a command said, for a one-line error: its standard error, or its
// standard output where it wrote nothing on standard error.
std::string first_line_said(const CapturedOutput& result);

// Where a shell would find `program` (a name without '/') on PATH: the first PATH entry that
// holds an executable file of that name; "" when none does.
std::string find_on_path(const std::string& program);

// A waitpid status as a shell reports it: the exit code, or 128 + the signal that ended it.
int exit_code_of_status(int status);

// How the child's program is found: as named (a path), or on PATH when its name has no '/'.
enum class ProgramLookup { kAsNamed, kOnPath };

// The child's side of a fork, async-signal-safe (it allocates nothing): standard input from
// /dev/null, standard output and error onto `out_fd` and `err_fd` (they may be the same), then
// `argv[0]` exec'd with `envp` (nullptr: this process's environment). When it cannot be
// started, "cannot start PROGRAM: why" goes to the error stream and the child exits with 127.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, int out_fd, int err_fd,
                             ProgramLookup lookup);

// This process's environment with `own` set over it, as execve takes it (through exec_argv).
std::vector<std::string> environment_with(const std::map<std::string, std::string>& own);

// The argv array execv/execvp take for `words` (null-terminated; it points into `words`,
// which must outlive it).
std::vector<char*> exec_argv(const std::vector<std::string>& words);

}  // namespace harness
