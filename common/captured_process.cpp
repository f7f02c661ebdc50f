#include "common/captured_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/parent_death.h"

namespace harness {

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

std::string first_line_said(const CapturedOutput& result) {
  const std::string& said = result.err.empty() ? result.out : result.err;
  return said.substr(0, said.find('\n'));
}

int exit_code_of_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
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

void exec_child(char* const* argv, char* const* envp, int out_fd, int err_fd,
                ProgramLookup lookup) {
  const int null_fd = ::open("/dev/null", O_RDONLY);
  ::dup2(null_fd, STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  char* const* environment = envp != nullptr ? envp : environ;
  if (lookup == ProgramLookup::kOnPath) {
    ::execvpe(argv[0], argv, environment);
  } else {
    ::execve(argv[0], argv, environment);
  }
  const char* why = std::strerror(errno);
  for (const char* part : {"cannot start ", static_cast<const char*>(argv[0]), ": ", why, "\n"}) {
    (void)!::write(STDERR_FILENO, part, std::strlen(part));
  }
  ::_exit(127);
}

std::vector<char*> exec_argv(const std::vector<std::string>& words) {
  std::vector<char*> argv;
  for (const auto& word : words) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  return argv;
}

CapturedOutput run_captured(const std::string& program, const std::vector<std::string>& args) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> words{program};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv = exec_argv(words);
  const pid_t pid = fork_dying_with_parent();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) exec_child(argv.data(), nullptr, out[1], err[1], ProgramLookup::kOnPath);
  ::close(out[1]);
  ::close(err[1]);
  // Both streams are read together, so that neither pipe can fill up and stall the child.
  CapturedOutput captured;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
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
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      captured.exit_code = 1;
      return captured;
    }
  }
  captured.exit_code = exit_code_of_status(status);
  return captured;
}

}  // namespace harness
