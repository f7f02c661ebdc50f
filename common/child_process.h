// The one process layer: every program the harness, the rank program or a tool of theirs starts
// is started, watched, stopped and reaped here (on Boost.Process v2, which only
// child_process.cpp includes: this header names no Boost type, so the build parses Boost once).
//
// A child dies with the thread that started it (PR_SET_PDEATHSIG; a harness killed with SIGKILL
// leaves none behind), its standard input is /dev/null unless it inherits ours, and a child
// still running when its ChildProcess goes is killed and reaped. A program that cannot be
// started is a child that ended at once with exit code 127, "cannot start PROGRAM: why" in its
// standard error, as a shell reports it.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace harness {

// Where one of a child's streams goes.
struct ChildStream {
  enum class Kind {
    kInherit,     // this process's own stream
    kNull,        // /dev/null
    kFile,        // `file`, created or truncated
    kDescriptor,  // `fd`, a descriptor of this process (a pipe's end), left open here
    kSameAsOut    // standard error only: wherever standard output goes
  };
  Kind kind = Kind::kInherit;
  std::filesystem::path file;
  int fd = -1;

  static ChildStream inherit() { return {}; }
  static ChildStream null() { return {Kind::kNull, {}, -1}; }
  static ChildStream to_file(std::filesystem::path path) {
    return {Kind::kFile, std::move(path), -1};
  }
  static ChildStream to_descriptor(int fd) { return {Kind::kDescriptor, {}, fd}; }
  static ChildStream same_as_out() { return {Kind::kSameAsOut, {}, -1}; }
};

struct ChildSpec {
  std::string program;  // with a '/': run as named; else looked up on PATH as a shell does
  std::vector<std::string> args;
  std::map<std::string, std::string> environment;  // set over this process's environment
  std::filesystem::path working_directory;         // empty: this process's
  bool inherit_stdin = false;                      // else /dev/null
  ChildStream out = ChildStream::inherit();
  ChildStream err = ChildStream::inherit();
  // Its own process group (its pid): stop() and kill() then reach everything it started that
  // stayed in the group (mpirun's and srun's local processes).
  bool own_process_group = false;
};

// How a child ended.
struct ChildExit {
  int code = 0;    // its exit code, or 128 + the signal that ended it, as a shell reports it
  int signal = 0;  // the signal that ended it; 0 when it exited
  bool succeeded() const { return code == 0 && signal == 0; }
  // "exited with code N" or "killed by signal N (Name)".
  std::string describe() const;
};

class ChildProcess {
 public:
  // Starts it. std::runtime_error only where no process can be made at all (a stream's file
  // that cannot be written, fork failing); a program that cannot be run is a child that ended
  // with 127 (above).
  explicit ChildProcess(const ChildSpec& spec);
  ~ChildProcess();  // kills (its group too) and reaps a child still running
  ChildProcess(ChildProcess&&) noexcept;
  ChildProcess& operator=(ChildProcess&&) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const;  // -1 for a program that could not be started

  // Its end, once it has ended (reaped then); nullopt while it runs. Never blocks.
  std::optional<ChildExit> poll();
  // Waits for its end.
  ChildExit wait();
  // Waits at most `seconds` for its end; nullopt while it still runs then.
  std::optional<ChildExit> wait_for(double seconds);
  // SIGTERM (to its group where it has one), up to `grace_s` for it to end, then SIGKILL, and
  // reaped. Where it had already ended, its end. With a group, whatever of the group outlived
  // the child is sent SIGKILL too.
  ChildExit stop(double grace_s);
  // SIGKILL to the child (to its group where it has one, even after the child ended), reaped.
  ChildExit kill();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A program run to its end with both output streams captured (read together, so that neither
// pipe fills up and stalls it); standard input /dev/null.
struct CapturedOutput {
  int exit_code = 0;  // 128 + the signal when one ended it; 127 when it could not start
  std::string out, err;
};
CapturedOutput run_captured(const std::string& program, const std::vector<std::string>& args);
// The same for a program, arguments, environment and folder as `spec` gives them (its streams'
// settings are the capture's).
CapturedOutput run_captured(ChildSpec spec);

// The first line of what a command said, for a one-line error: its standard error, or its
// standard output where it wrote nothing on standard error.
std::string first_line_said(const CapturedOutput& result);

// Replaces this process with `program` (found as ChildSpec::program is), standard streams and
// environment as they are. Returns only by throwing std::runtime_error ("cannot start ..."),
// errno set to why.
[[noreturn]] void replace_this_process(const std::string& program,
                                       const std::vector<std::string>& args);

// This process dies (SIGKILL) when the thread of `parent` that started it ends, and ends at once
// with 137 where `parent` (getppid() as it was earlier) is gone already: a rank started by a
// launcher's daemon ends with it.
void die_with_parent(int parent);

// Where a shell would find `program` (a name without '/') on PATH: the first PATH entry that
// holds an executable file of that name; "" when none does.
std::string find_on_path(const std::string& program);

}  // namespace harness
