#include "common/child_process.h"

// Boost.Process v2 with std::filesystem: header-only, no Boost library to link.
#define BOOST_PROCESS_USE_STD_FS 1

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <type_traits>

// Boost 1.81's Process v2 names boost::optional without including it where std::filesystem is
// used: included before it.
#include <boost/optional.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>

namespace harness {

namespace bp = boost::process::v2;
namespace fs = std::filesystem;

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(10);

// An open file descriptor, closed with its owner.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// A descriptor of 3 or above, close-on-exec: never one of the standard streams the child's
// dup2 calls write over, even where this process runs with one of them closed.
Fd above_standard_streams(int fd) {
  if (fd < 0 || fd > STDERR_FILENO) return Fd(fd);
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  ::close(fd);
  return Fd(moved);
}

Fd open_or_throw(const fs::path& path, int flags) {
  Fd fd = above_standard_streams(::open(path.c_str(), flags | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
  }
  return fd;
}

ChildExit exit_of_status(int status) {
  if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
  if (WIFEXITED(status)) return {WEXITSTATUS(status), 0};
  return {1, 0};
}

// The child's side of the launch, between fork and exec: only async-signal-safe calls.
struct ChildSetup {
  pid_t parent;
  bool own_process_group;
  const char* working_directory;   // nullptr: stay
  const char* const* environment;  // execve's envp

  bp::error_code on_setup(bp::posix::default_launcher& launcher, const fs::path&,
                          const char* const*) {
    launcher.env = environment;
    return {};
  }
  bp::error_code on_exec_setup(bp::posix::default_launcher&, const fs::path&, const char* const*) {
    // Dies with the thread that started it, also where that ended before this line.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(137);
    if (own_process_group) ::setpgid(0, 0);
    if (working_directory != nullptr && ::chdir(working_directory) != 0) {
      return bp::error_code(errno, bp::system_category());
    }
    return {};
  }
  void on_exec_error(bp::posix::default_launcher&, const fs::path&, const char* const*,
                     const bp::error_code&) {
    // Not exit(): no atexit handler of this forked copy of the parent may run.
    ::_exit(127);
  }
  void on_success(bp::posix::default_launcher& launcher, const fs::path&, const char* const*) {
    // Also in the parent, so that a signal to the group right after the start reaches it.
    if (own_process_group) ::setpgid(launcher.pid, launcher.pid);
  }
};

// The program as execve takes it: as named with a '/', else the first match on PATH.
std::string resolved_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  return find_on_path(program);
}

std::vector<std::string> environment_with(const std::map<std::string, std::string>& own) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    if (own.count(text.substr(0, text.find('='))) == 0) entries.push_back(text);
  }
  for (const auto& [key, value] : own) entries.push_back(key + "=" + value);
  return entries;
}

std::vector<const char*> null_terminated(const std::vector<std::string>& words) {
  std::vector<const char*> pointers;
  for (const auto& word : words) pointers.push_back(word.c_str());
  pointers.push_back(nullptr);
  return pointers;
}

void write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0 && errno != EINTR) return;
    if (n > 0) done += static_cast<size_t>(n);
  }
}

// One of a child's streams as the launch binds it: the descriptor it is given (opened here
// where this owns it), -1 for this process's own.
struct BoundStream {
  Fd owned;
  int fd = -1;
};

BoundStream bind_stream(const ChildStream& stream) {
  switch (stream.kind) {
    case ChildStream::Kind::kNull: {
      Fd fd = above_standard_streams(::open("/dev/null", O_WRONLY | O_CLOEXEC));
      const int raw = fd.get();
      return {std::move(fd), raw};
    }
    case ChildStream::Kind::kFile: {
      if (stream.file.has_parent_path()) fs::create_directories(stream.file.parent_path());
      Fd fd = open_or_throw(stream.file, O_WRONLY | O_CREAT | O_TRUNC);
      const int raw = fd.get();
      return {std::move(fd), raw};
    }
    case ChildStream::Kind::kDescriptor:
      return {Fd(), stream.fd};
    default:
      return {};
  }
}

}  // namespace

std::string ChildExit::describe() const {
  if (signal != 0) {
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "exited with code " + std::to_string(code);
}

struct ChildProcess::State {
  boost::asio::io_context context;
  std::optional<bp::process> process;
  std::optional<ChildExit> ended;
  bool own_process_group = false;
  int pid = -1;

  // Starts it on `in`, `out` and `err` (-1: this process's own); a program that cannot be run
  // ends the child at once with 127, and the reason goes to `said_fd` (-1: nowhere).
  void launch(const ChildSpec& spec, int in, int out, int err, int said_fd) {
    own_process_group = spec.own_process_group;
    const std::string program = resolved_program(spec.program);
    const std::vector<std::string> entries = environment_with(spec.environment);
    const std::vector<const char*> envp = null_terminated(entries);
    const std::string directory = spec.working_directory.string();
    ChildSetup setup{::getpid(), spec.own_process_group,
                     directory.empty() ? nullptr : directory.c_str(), envp.data()};
    bp::process_stdio stdio{in < 0 ? STDIN_FILENO : in, out < 0 ? STDOUT_FILENO : out,
                            err < 0 ? STDERR_FILENO : err};
    bp::error_code error;
    if (program.empty()) {
      error = bp::error_code(ENOENT, bp::system_category());
    } else {
      // Through the executor: 1.81's overload that takes the context and an error_code drops
      // the error_code and throws.
      bp::posix::default_launcher launcher;
      process.emplace(launcher(context.get_executor(), error, program, spec.args, stdio, setup));
    }
    if (!error) {
      pid = process->id();
      return;
    }
    process.reset();
    if (error.value() == EAGAIN || error.value() == ENOMEM) {
      throw std::runtime_error("fork: " + error.message());
    }
    if (said_fd >= 0) {
      write_all(said_fd, "cannot start " + spec.program + ": " + error.message() + "\n");
    }
    ended = ChildExit{127, 0};
  }

  std::optional<ChildExit> poll() {
    if (ended || !process) return ended;
    bp::error_code error;
    if (process->running(error)) return std::nullopt;
    ended = error ? ChildExit{1, 0} : exit_of_status(process->native_exit_code());
    return ended;
  }

  void signal(int number) {
    if (pid <= 0) return;
    if (own_process_group) {
      ::kill(-pid, number);  // the group outlives its leader: reached either way
    } else if (!ended) {
      ::kill(pid, number);
    }
  }

  ChildExit reap() {
    while (true) {
      if (auto done = poll()) return *done;
      std::this_thread::sleep_for(kPollInterval);
    }
  }
};

ChildProcess::ChildProcess(const ChildSpec& spec) : state_(std::make_unique<State>()) {
  Fd in;
  if (!spec.inherit_stdin) in = above_standard_streams(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  BoundStream out = bind_stream(spec.out);
  BoundStream err = spec.err.kind == ChildStream::Kind::kSameAsOut
                        ? BoundStream{Fd(), out.fd < 0 ? STDOUT_FILENO : out.fd}
                        : bind_stream(spec.err);
  // A program that cannot run says so where its standard error would have gone.
  const bool err_to_null =
      spec.err.kind == ChildStream::Kind::kNull ||
      (spec.err.kind == ChildStream::Kind::kSameAsOut && spec.out.kind == ChildStream::Kind::kNull);
  const int said_fd = err_to_null ? -1 : (err.fd < 0 ? STDERR_FILENO : err.fd);
  state_->launch(spec, in.get(), out.fd, err.fd, said_fd);
}

ChildProcess::~ChildProcess() {
  if (state_ && state_->pid > 0 && !state_->ended) {
    try {
      kill();
    } catch (...) {
    }
  }
}

ChildProcess::ChildProcess(ChildProcess&&) noexcept = default;
ChildProcess& ChildProcess::operator=(ChildProcess&&) noexcept = default;

int ChildProcess::pid() const { return state_->pid; }

std::optional<ChildExit> ChildProcess::poll() { return state_->poll(); }

ChildExit ChildProcess::wait() { return state_->reap(); }

std::optional<ChildExit> ChildProcess::wait_for(double seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, seconds));
  while (true) {
    if (auto done = state_->poll()) return done;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kPollInterval);
  }
}

ChildExit ChildProcess::stop(double grace_s) {
  if (!state_->poll()) {
    state_->signal(SIGTERM);
    if (auto done = wait_for(grace_s)) {
      if (state_->own_process_group) state_->signal(SIGKILL);  // what outlived the leader
      return *done;
    }
  }
  return kill();
}

ChildExit ChildProcess::kill() {
  state_->signal(SIGKILL);
  return state_->reap();
}

CapturedOutput run_captured(const std::string& program, const std::vector<std::string>& args) {
  ChildSpec spec;
  spec.program = program;
  spec.args = args;
  return run_captured(std::move(spec));
}

CapturedOutput run_captured(ChildSpec spec) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  Fd out_read(out_pipe[0]), out_write = above_standard_streams(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  Fd err_read(err_pipe[0]), err_write = above_standard_streams(err_pipe[1]);
  spec.inherit_stdin = false;
  spec.out = ChildStream::to_descriptor(out_write.get());
  spec.err = ChildStream::to_descriptor(err_write.get());
  ChildProcess child(spec);
  // This process's write ends closed: the reads below end when the child's do.
  out_write = Fd();
  err_write = Fd();
  CapturedOutput captured;
  pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}};
  std::string* sinks[2] = {&captured.out, &captured.err};
  int open_streams = 2;
  while (open_streams > 0) {
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
  captured.exit_code = child.wait().code;
  return captured;
}

std::string first_line_said(const CapturedOutput& result) {
  const std::string& said = result.err.empty() ? result.out : result.err;
  return said.substr(0, said.find('\n'));
}

void replace_this_process(const std::string& program, const std::vector<std::string>& args) {
  const std::string path = resolved_program(program);
  std::vector<std::string> words{program};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<const char*> argv = null_terminated(words);
  std::fflush(nullptr);
  if (!path.empty()) ::execv(path.c_str(), const_cast<char* const*>(argv.data()));
  const int why = path.empty() ? ENOENT : errno;
  const std::string message = "cannot start " + program + ": " + std::strerror(why);
  errno = why;  // for a caller that reports errno
  throw std::runtime_error(message);
}

void die_with_parent(int parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(137);
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  const std::string entries = path ? path : "";
  for (size_t begin = 0; begin <= entries.size();) {
    const size_t end = std::min(entries.find(':', begin), entries.size());
    // An empty entry is the current folder, as for a shell.
    const std::string folder = end == begin ? "." : entries.substr(begin, end - begin);
    const std::string candidate = folder + "/" + program;
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    begin = end + 1;
  }
  return "";
}

}  // namespace harness
