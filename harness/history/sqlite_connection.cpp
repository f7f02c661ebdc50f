#include "harness/history/sqlite_connection.h"

#include <sqlite3.h>

#include <cstdio>
#include <map>

#include "common/input_error.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

// A writer waits this long for another's transaction before giving up: an add takes well under
// a second, so two CI jobs adding at once both land.
constexpr int kBusyTimeoutMs = 30000;

class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(const fs::path& file, OpenIntent intent) : file_(file) {
    const int flags = intent == OpenIntent::write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                                  : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(file.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw InputError("--db " + file.string() + ": cannot open (" + message + ")");
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  }
  ~SqliteConnection() override {
    for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
    sqlite3_close(db_);
  }

  std::vector<SqlRow> query(const std::string& sql,
                            const std::vector<SqlValue>& parameters) override {
    sqlite3_stmt* statement = prepared(sql);
    bind(statement, parameters);
    std::vector<SqlRow> rows;
    int status;
    while ((status = sqlite3_step(statement)) == SQLITE_ROW) {
      const int columns = sqlite3_column_count(statement);
      SqlRow row(static_cast<size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        const int type = sqlite3_column_type(statement, c);
        if (type == SQLITE_NULL) continue;
        if (type == SQLITE_FLOAT) {
          // SQLite's own text of a REAL keeps 15 digits; 17 give the double back exactly.
          char text[32];
          std::snprintf(text, sizeof text, "%.17g", sqlite3_column_double(statement, c));
          row[size_t(c)] = text;
          continue;
        }
        row[size_t(c)] = reinterpret_cast<const char*>(sqlite3_column_text(statement, c));
      }
      rows.push_back(std::move(row));
    }
    sqlite3_reset(statement);
    if (status != SQLITE_DONE) fail(sql);
    return rows;
  }

  void execute_many(const std::string& sql,
                    const std::vector<std::vector<SqlValue>>& rows) override {
    sqlite3_stmt* statement = prepared(sql);
    for (const auto& row : rows) {
      bind(statement, row);
      const int status = sqlite3_step(statement);
      sqlite3_reset(statement);
      if (status != SQLITE_DONE) fail(sql);
    }
  }

  void prepare_for_writers() override { query("PRAGMA journal_mode=WAL", {}); }
  void begin() override { query("BEGIN IMMEDIATE", {}); }
  void commit() override { query("COMMIT", {}); }
  void rollback() override { query("ROLLBACK", {}); }
  std::string description() const override { return "SQLite " + file_.string(); }
  std::string auto_key() const override { return "INTEGER PRIMARY KEY"; }
  std::string table_names_query() const override {
    return "SELECT name FROM sqlite_master WHERE type = 'table'";
  }

 private:
  sqlite3_stmt* prepared(const std::string& sql) {
    if (auto found = statements_.find(sql); found != statements_.end()) return found->second;
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), int(sql.size()), &statement, nullptr) != SQLITE_OK) {
      fail(sql);
    }
    statements_.emplace(sql, statement);
    return statement;
  }
  void bind(sqlite3_stmt* statement, const std::vector<SqlValue>& parameters) {
    sqlite3_clear_bindings(statement);
    for (size_t i = 0; i < parameters.size(); ++i) {
      const int slot = int(i + 1);
      const int status = parameters[i]
                             ? sqlite3_bind_text(statement, slot, parameters[i]->c_str(),
                                                 int(parameters[i]->size()), SQLITE_TRANSIENT)
                             : sqlite3_bind_null(statement, slot);
      if (status != SQLITE_OK) fail("bind");
    }
  }
  [[noreturn]] void fail(const std::string& what) {
    // "file is not a database" for a corrupt file, "database is locked" past the timeout.
    throw InputError("--db " + file_.string() + ": " + sqlite3_errmsg(db_) + " (" +
                     what.substr(0, what.find_first_of("(\n")) + ")");
  }

  fs::path file_;
  sqlite3* db_ = nullptr;
  std::map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace

std::unique_ptr<SqlConnection> open_sqlite(const fs::path& file, OpenIntent intent) {
  std::error_code error;
  if (intent == OpenIntent::read && !fs::exists(file, error)) {
    throw InputError("--db " + file.string() + ": no such history (harness history add makes one)");
  }
  // A FIFO would block SQLite's open, a device is no database.
  if (fs::exists(file, error) && !fs::is_regular_file(file, error)) {
    throw InputError("--db " + file.string() + ": not a regular file");
  }
  return std::make_unique<SqliteConnection>(file, intent);
}

}  // namespace harness
