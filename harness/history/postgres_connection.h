// A history on a PostgreSQL server (`--db postgresql://user@host:port/db`, libpq's connection
// URI): for a team whose CI machines share one history. The same schema and queries as SQLite's.
#pragma once

#include <memory>
#include <string>

#include "harness/history/sql_connection.h"

namespace harness {

// Throws InputError (the URI with its password hidden, and libpq's first line) when the server
// cannot be reached or refuses.
std::unique_ptr<SqlConnection> open_postgres(const std::string& uri);

// postgresql:// or postgres://: a URI libpq takes.
bool is_postgres_uri(const std::string& db);

}  // namespace harness
