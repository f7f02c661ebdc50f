#include "harness/plot/templates.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#ifndef HARNESS_PLOTS_DIR
#define HARNESS_PLOTS_DIR "plots"
#endif

namespace harness {

namespace fs = std::filesystem;

fs::path plot_templates_dir() {
  const char* configured = std::getenv("HARNESS_PLOTS_DIR");
  return configured && *configured ? fs::path(configured) : fs::path(HARNESS_PLOTS_DIR);
}

std::string fill_plot_template(const std::string& name,
                               const std::map<std::string, std::string>& values) {
  const fs::path file = plot_templates_dir() / (name + ".gp");
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read the plot template " + file.string());
  std::string filled, line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("##", 0) == 0) continue;
    std::string out;
    size_t at = 0;
    while (true) {
      const size_t open = line.find("{{", at);
      if (open == std::string::npos) break;
      const size_t close = line.find("}}", open + 2);
      if (close == std::string::npos) break;
      const std::string key = line.substr(open + 2, close - open - 2);
      const auto value = values.find(key);
      if (value == values.end()) {
        throw std::runtime_error(file.string() + ":" + std::to_string(number) +
                                 ": unknown placeholder {{" + key + "}}");
      }
      out += line.substr(at, open - at) + value->second;
      at = close + 2;
    }
    filled += out + line.substr(at) + "\n";
  }
  return filled;
}

}  // namespace harness
