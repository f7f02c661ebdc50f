#include "runtime/comm/result_gather.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "runtime/protocol/result_frames.h"
#include "runtime/protocol/sample_log.h"

namespace runtime {
namespace {

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<uint8_t> to_bytes(const std::string& text) { return {text.begin(), text.end()}; }
std::string from_bytes(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

std::string key(int rank, const std::string& what) {
  return "harness/results/" + std::to_string(rank) + "/" + what;
}

}  // namespace

int gather_result_files(c10d::Store& store, int rank, int world_size,
                        const std::filesystem::path& directory) {
  if (rank != 0) {
    std::string names;
    for (const auto& name : list_result_files(directory)) {
      store.set(key(rank, "file/" + name), to_bytes(read_bytes(directory / name)));
      names += name + "\n";
    }
    // The list last: rank 0 reads it only once every file it names is in the store.
    store.set(key(rank, "list"), to_bytes(names));
    return 0;
  }
  int received = 0;
  for (int r = 1; r < world_size; ++r) {
    std::istringstream names(from_bytes(store.get(key(r, "list"))));
    for (std::string name; std::getline(names, name);) {
      if (!is_result_file_name(name)) continue;
      write_text_atomic(directory / name, from_bytes(store.get(key(r, "file/" + name))));
      ++received;
    }
  }
  return received;
}

void emit_result_frames(const std::filesystem::path& directory) {
  for (const auto& name : list_result_files(directory)) {
    const std::string frame = frame_file(name, read_bytes(directory / name));
    std::fwrite(frame.data(), 1, frame.size(), stdout);
  }
  std::fflush(stdout);
}

}  // namespace runtime
