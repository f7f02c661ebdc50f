// Gathers every rank's result files into rank 0's run folder through the rendezvous store at
// the end of a run, so that no shared file system is assumed: ranks on other hosts write
// their files locally, then hand them to rank 0 through the c10d store.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <filesystem>
#include <string>

namespace runtime {

// Ranks other than 0 publish their result files (runtime/protocol/result_frames.h:
// is_result_file_name) from `directory`; rank 0 waits for each rank's files and writes them into
// its `directory` (atomically). Returns how many files rank 0 received (0 on other ranks).
int gather_result_files(c10d::Store& store, int rank, int world_size,
                        const std::filesystem::path& directory);

// Prints every result file of `directory` to stdout as frames (runtime/protocol/result_frames.h).
void emit_result_frames(const std::filesystem::path& directory);

}  // namespace runtime
