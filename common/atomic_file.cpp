#include "common/atomic_file.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace harness {

namespace fs = std::filesystem;

void write_file_atomic(const fs::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const fs::path temporary =
      path.parent_path() / ("." + path.filename().string() + ".tmp." + std::to_string(getpid()));
  bool written = false;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + temporary.string());
    out << content;
    out.flush();
    written = static_cast<bool>(out);
  }
  std::error_code error;
  if (!written) {
    fs::remove(temporary, error);
    throw std::runtime_error("cannot write " + temporary.string());
  }
  fs::rename(temporary, path, error);
  if (error) {
    // Nothing half-written stays behind: the temporary goes, the destination is untouched.
    const std::string why = error.message();
    fs::remove(temporary, error);
    throw std::runtime_error("cannot write " + path.string() + ": " + why);
  }
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace harness
