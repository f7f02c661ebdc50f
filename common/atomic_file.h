// Writing files so that a reader never sees half of one (write to a temporary name in the
// same folder, then rename), reading one whole, and making a command's output folder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace harness {

// Writes `content` to `path` atomically; creates parent folders.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

std::string read_file(const std::filesystem::path& path);

// The whole of a file the harness reads as input, at most kMaxInputFileBytes (InputError
// "FILE: larger than 64 MiB"); nothing when it cannot be opened (the caller says so).
std::optional<std::string> read_input_file(const std::filesystem::path& path);

// Whether `path` is a regular file this process may read: checked without opening it (an open of
// a FIFO blocks until a writer comes).
bool readable_regular_file(const std::filesystem::path& path);

// Makes `folder` (and its parents) for a command's output before the command does any work:
// one that cannot be made (under a file, read-only, in /proc) is bad input, InputError
// "OPTION 'FOLDER': cannot create folder: why", never a failure after minutes of work.
void create_output_folder(const std::filesystem::path& folder, const std::string& option);

// Checks, before a command does any work and without making anything, that `path` can be
// written later: its nearest existing ancestor is a folder that takes files. InputError
// "OPTION 'PATH': cannot write there: why" otherwise. check_output_file also refuses a path
// that is a folder.
void check_output_place(const std::filesystem::path& path, const std::string& option);
void check_output_file(const std::filesystem::path& file, const std::string& option);

}  // namespace harness
