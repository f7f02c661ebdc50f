// A connection to the database that holds a history, reduced to what the history store needs:
// statements with positional text parameters (written `?`), rows back as text, transactions.
// One implementation per engine (sqlite_connection, postgres_connection), as c10d keeps one Store
// per backend behind one interface; the schema and every query live once, in history_store.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace harness {

using SqlValue = std::optional<std::string>;  // nullopt: SQL NULL
using SqlRow = std::vector<SqlValue>;

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // Runs one statement; its rows, if any, as text. Throws InputError with the engine's
  // message (one line, the database named): `harness history` exits 2.
  virtual std::vector<SqlRow> query(const std::string& sql,
                                    const std::vector<SqlValue>& parameters = {}) = 0;
  // Runs one statement once per parameter row (an insert of many rows), in the open transaction.
  virtual void execute_many(const std::string& sql,
                            const std::vector<std::vector<SqlValue>>& rows) = 0;
  // BEGIN that takes the write lock at once (SQLite: IMMEDIATE), COMMIT, ROLLBACK.
  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  // "SQLite 3.40.1, results/history.sqlite" or "PostgreSQL 15.8, host/db": said in errors.
  virtual std::string description() const = 0;
  // The SQL type of an auto-numbered key: "INTEGER PRIMARY KEY" or "BIGSERIAL PRIMARY KEY".
  virtual std::string auto_key() const = 0;
  // A query whose rows are the names of the database's tables (each engine keeps them apart).
  virtual std::string table_names_query() const = 0;
  // Called once the database is known to be a history and is opened for writing (never before:
  // a refused foreign file stays as it was). SQLite turns to its write-ahead log here, so that
  // readers and a writer do not block one another.
  virtual void prepare_for_writers() {}
};

}  // namespace harness
