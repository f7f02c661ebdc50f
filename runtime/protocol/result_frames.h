// Result files framed in a rank's stdout, so that they reach the host that ran the launcher
// (mpirun, srun, torchrun forward every rank's stdout there) without a shared file system.
// Torch-free: the worker writes frames, the harness reads them back.
//
// One frame per file:
//   @harness-file <name> <bytes> <fnv1a64 hex>
//   <the content in base64, 76 characters a line>
//   @harness-end <name>
// Names are plain file names ([A-Za-z0-9_.-], no '/'); the checksum is over the content.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace runtime {

// Result files a rank writes into its run folder that must reach the invoking host:
// rank<r>.csv, trace_rank<r>.json, pipeline_rank<r>.json and rank 0's buckets.json.
bool is_result_file_name(const std::string& name);

// The result files present in `directory`, sorted by name.
std::vector<std::string> list_result_files(const std::filesystem::path& directory);

std::string base64_encode(const std::string& bytes);
// Throws std::invalid_argument on a character outside the alphabet or a bad length.
std::string base64_decode(const std::string& text);

unsigned long long fnv1a64(const std::string& bytes);

// The frame of one file, newline-terminated.
std::string frame_file(const std::string& name, const std::string& content);

struct DecodedFrames {
  std::map<std::string, std::string> files;  // name -> content, checksums verified
  std::vector<std::string> errors;           // one line per damaged or unfinished frame
};

// Finds every frame in `text` (other lines are ignored).
DecodedFrames decode_frames(const std::string& text);

}  // namespace runtime
