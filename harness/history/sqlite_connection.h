// The embedded history database: one SQLite file, in WAL mode (readers never wait for a writer),
// with a busy timeout so that two `harness history add` at once queue instead of failing.
#pragma once

#include <filesystem>
#include <memory>

#include "harness/history/sql_connection.h"

namespace harness {

enum class OpenIntent { read, write };

// Throws InputError when the file cannot be opened, or (OpenIntent::read) does not exist.
std::unique_ptr<SqlConnection> open_sqlite(const std::filesystem::path& file, OpenIntent intent);

}  // namespace harness
