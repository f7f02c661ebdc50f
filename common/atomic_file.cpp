#include "common/atomic_file.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "common/input_error.h"
#include "common/limits.h"

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

bool readable_regular_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), R_OK) == 0;
}

std::optional<std::string> read_input_file(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) return std::nullopt;
  // A FIFO would block the open, a device (/dev/zero) never end: only regular files are read.
  if (!fs::is_regular_file(status)) {
    throw InputError(path.string() + ": not a regular file" +
                     (fs::is_directory(status) ? " (a folder)" : ""));
  }
  const std::string too_large =
      path.string() + ": larger than " + std::to_string(kMaxInputFileBytes >> 20) + " MiB";
  const auto bytes = fs::file_size(path, error);
  if (!error && bytes > static_cast<std::uintmax_t>(kMaxInputFileBytes))
    throw InputError(too_large);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  // The read is bounded too: a file that grows while it is read stops at the limit.
  std::string text;
  if (!error) text.reserve(static_cast<size_t>(bytes));
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > static_cast<size_t>(kMaxInputFileBytes)) throw InputError(too_large);
  }
  return text;
}

namespace {

// Whether a file can be made in `folder` (root passes every permission check, /proc included):
// a probe file made and removed.
bool takes_files(const fs::path& folder) {
  const fs::path probe = folder / (".harness-probe." + std::to_string(getpid()));
  if (!std::ofstream(probe)) return false;
  std::error_code ignored;
  fs::remove(probe, ignored);
  return true;
}

}  // namespace

void check_output_place(const fs::path& path, const std::string& option) {
  const fs::path absolute = fs::absolute(path).lexically_normal();
  fs::path ancestor = absolute.parent_path();
  std::error_code error;
  while (!fs::exists(ancestor, error) && ancestor.has_relative_path()) {
    ancestor = ancestor.parent_path();
  }
  const auto refuse = [&](const std::string& why) {
    throw InputError(option + " '" + path.string() + "': cannot write there: " + why);
  };
  if (!fs::is_directory(ancestor, error)) refuse("'" + ancestor.string() + "' is not a folder");
  if (!takes_files(ancestor)) refuse("'" + ancestor.string() + "' takes no files");
}

void check_output_file(const fs::path& file, const std::string& option) {
  std::error_code error;
  if (fs::is_directory(file, error)) {
    throw InputError(option + " '" + file.string() + "': is a folder, not a file");
  }
  check_output_place(file, option);
}

void create_output_folder(const fs::path& folder, const std::string& option) {
  std::error_code error;
  fs::create_directories(folder, error);
  // create_directories reports no error for a path that exists as a file.
  if (!error && !fs::is_directory(folder)) error = std::make_error_code(std::errc::not_a_directory);
  // Root may create where it cannot write (/proc passes every permission check).
  if (!error && !takes_files(folder)) error = std::make_error_code(std::errc::permission_denied);
  if (error) {
    throw InputError(option + " '" + folder.string() +
                     "': cannot create folder: " + error.message());
  }
}

}  // namespace harness
