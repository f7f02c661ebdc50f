#include "harness/plot/gnuplot.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "common/atomic_file.h"
#include "common/child_process.h"
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

// Runs `program script` in `directory`; returns the exit status and what it said (standard
// error first: gnuplot's errors and warnings go there).
int run_gnuplot(const fs::path& directory, const std::string& script, std::string& output) {
  const char* configured = std::getenv("HARNESS_GNUPLOT");
  ChildSpec spec;
  spec.program = configured && *configured ? configured : "gnuplot";
  spec.args = {script};
  spec.working_directory = directory;
  const CapturedOutput ran = run_captured(std::move(spec));
  output = ran.err + ran.out;
  return ran.exit_code;
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
