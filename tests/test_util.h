// Helpers shared by the unit tests: temporary folders and files that clean up after themselves,
// and the message of an expected exception.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace harness_test {

// what() of the `Exception` that `action` throws, or "" when it throws none.
template <typename Exception, typename Action>
std::string thrown_message(Action&& action) {
  try {
    std::forward<Action>(action)();
  } catch (const Exception& e) {
    return e.what();
  }
  return "";
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "harness-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    const auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << content;
    return file;
  }
  // `write`, then mode 0755 (a stand-in program: a script that runs as a program would).
  std::filesystem::path write_program(const std::string& name, const std::string& content) const {
    const auto file = write(name, content);
    std::filesystem::permissions(file, std::filesystem::perms{0755});
    return file;
  }

 private:
  std::filesystem::path path_;
};

// An environment variable set for one scope and put back after it (unset again where it was).
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    const char* old = std::getenv(name_.c_str());
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() { had_ ? ::setenv(name_.c_str(), old_.c_str(), 1) : ::unsetenv(name_.c_str()); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  bool had_ = false;
  std::string old_;
};

// The lines of a text file; none when it cannot be read (a stand-in program's log of its starts
// before its first start).
inline std::vector<std::string> file_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Whether gnuplot runs here: the tests that draw figures skip without it.
inline bool have_gnuplot() { return std::system("gnuplot --version >/dev/null 2>&1") == 0; }

}  // namespace harness_test
