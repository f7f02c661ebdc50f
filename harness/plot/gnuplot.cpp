#include "harness/plot/gnuplot.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "common/atomic_file.h"
#include "common/parent_death.h"
#include "harness/plot/templates.h"

namespace harness {

namespace fs = std::filesystem;

std::string gnuplot_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";  // a line break in titles
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string gnuplot_script(const Figure& f) {
  std::string body;
  // Indent the kind's commands inside the frame's loop for readability; gnuplot does not care.
  std::istringstream lines(fill_plot_template(f.layout.empty() ? f.kind : f.layout, f.fields));
  for (std::string line; std::getline(lines, line);) body += "  " + line + "\n";
  if (!body.empty()) body.pop_back();
  return fill_plot_template("frame", {{"stem", f.stem},
                                      {"title", f.title},
                                      {"width", std::to_string(f.width)},
                                      {"height", std::to_string(f.height)},
                                      {"body", body}});
}

namespace {

// Runs `program script` in `directory`; returns the exit status and the combined output.
int run_gnuplot(const fs::path& directory, const std::string& script, std::string& output) {
  const char* configured = std::getenv("HARNESS_GNUPLOT");
  const std::string program = configured && *configured ? configured : "gnuplot";
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("cannot create a pipe for gnuplot");
  const pid_t pid = fork_dying_with_parent();
  if (pid < 0) throw std::runtime_error("cannot start gnuplot");
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (chdir(directory.c_str()) != 0) _exit(126);
    execlp(program.c_str(), program.c_str(), script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) output.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

void render_figure(const Figure& figure, const fs::path& directory) {
  fs::create_directories(directory);
  write_file_atomic(directory / (figure.stem + ".dat"), figure.data);
  write_file_atomic(directory / (figure.stem + ".gp"), gnuplot_script(figure));
  std::string output;
  const int code = run_gnuplot(directory, figure.stem + ".gp", output);
  if (code == 127) {
    throw std::runtime_error("gnuplot not found (install gnuplot-nox, or set HARNESS_GNUPLOT)");
  }
  if (code != 0) {
    throw std::runtime_error("gnuplot failed (exit " + std::to_string(code) + ") on " +
                             (directory / (figure.stem + ".gp")).string() + ":\n" + output);
  }
  for (const char* extension : {".png", ".svg"}) {
    const fs::path image = directory / (figure.stem + extension);
    if (!fs::exists(image) || fs::file_size(image) == 0) {
      throw std::runtime_error("gnuplot wrote no " + image.string() + ":\n" + output);
    }
  }
}

}  // namespace harness
