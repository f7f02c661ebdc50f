#include "harness/history/postgres_connection.h"

#include <libpq-fe.h>

#include <map>
#include <regex>

#include "common/input_error.h"

namespace harness {

namespace {

// "postgresql://ci:secret@db/history?password=x" -> "postgresql://ci:***@db/history?password=***":
// errors and the report name the database, never its password, in the user part or the query.
std::string without_password(const std::string& uri) {
  static const std::regex user_part(R"(^([a-z]+://[^:/@]*):[^@]*@)");
  static const std::regex query_part(R"(([?&]password=)[^&#]*)", std::regex::icase);
  return std::regex_replace(std::regex_replace(uri, user_part, "$1:***@"), query_part, "$1***");
}

// libpq's message up to its first line break.
std::string first_line(const char* message) {
  const std::string text = message ? message : "";
  return text.substr(0, text.find('\n'));
}

// "... WHERE a = ? AND b = ?" -> "... WHERE a = $1 AND b = $2" (no statement here has a literal
// question mark).
std::string numbered_parameters(const std::string& sql) {
  std::string out;
  int next = 1;
  for (const char c : sql) {
    if (c == '?') {
      out += "$" + std::to_string(next++);
    } else {
      out += c;
    }
  }
  return out;
}

class PostgresConnection final : public SqlConnection {
 public:
  explicit PostgresConnection(const std::string& uri) : name_(without_password(uri)) {
    connection_ = PQconnectdb(uri.c_str());
    if (PQstatus(connection_) != CONNECTION_OK) {
      const std::string message = first_line(PQerrorMessage(connection_));
      PQfinish(connection_);
      connection_ = nullptr;
      throw InputError("--db " + name_ + ": cannot connect (" + message + ")");
    }
    // A history's notices (CREATE TABLE IF NOT EXISTS of a table that exists) are not news.
    PQsetNoticeProcessor(
        connection_, [](void*, const char*) {}, nullptr);
  }
  ~PostgresConnection() override { PQfinish(connection_); }

  std::vector<SqlRow> query(const std::string& sql,
                            const std::vector<SqlValue>& parameters) override {
    PGresult* result = run(sql, parameters);
    std::vector<SqlRow> rows(size_t(PQntuples(result)), SqlRow(size_t(PQnfields(result))));
    for (int r = 0; r < PQntuples(result); ++r) {
      for (int c = 0; c < PQnfields(result); ++c) {
        if (!PQgetisnull(result, r, c)) rows[size_t(r)][size_t(c)] = PQgetvalue(result, r, c);
      }
    }
    PQclear(result);
    return rows;
  }

  void execute_many(const std::string& sql,
                    const std::vector<std::vector<SqlValue>>& rows) override {
    for (const auto& row : rows) PQclear(run(sql, row));
  }

  void begin() override { query("BEGIN", {}); }
  void commit() override { query("COMMIT", {}); }
  void rollback() override { query("ROLLBACK", {}); }
  std::string description() const override { return "PostgreSQL " + name_; }
  std::string auto_key() const override { return "BIGSERIAL PRIMARY KEY"; }
  std::string table_names_query() const override {
    return "SELECT table_name FROM information_schema.tables WHERE table_schema = "
           "current_schema()";
  }

 private:
  // Prepared once per statement text; its result, which the caller clears.
  PGresult* run(const std::string& sql, const std::vector<SqlValue>& parameters) {
    auto found = prepared_.find(sql);
    if (found == prepared_.end()) {
      const std::string name = "s" + std::to_string(prepared_.size());
      PGresult* prepared = PQprepare(connection_, name.c_str(), numbered_parameters(sql).c_str(),
                                     int(parameters.size()), nullptr);
      check(prepared, sql);
      PQclear(prepared);
      found = prepared_.emplace(sql, name).first;
    }
    std::vector<const char*> values;
    for (const SqlValue& value : parameters) values.push_back(value ? value->c_str() : nullptr);
    PGresult* result = PQexecPrepared(connection_, found->second.c_str(), int(values.size()),
                                      values.data(), nullptr, nullptr, 0);
    check(result, sql);
    return result;
  }
  void check(PGresult* result, const std::string& sql) {
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return;
    const std::string message = first_line(PQresultErrorMessage(result));
    PQclear(result);
    throw InputError("--db " + name_ + ": " + message + " (" +
                     sql.substr(0, sql.find_first_of("(\n")) + ")");
  }

  std::string name_;
  PGconn* connection_ = nullptr;
  std::map<std::string, std::string> prepared_;
};

}  // namespace

bool is_postgres_uri(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

std::unique_ptr<SqlConnection> open_postgres(const std::string& uri) {
  return std::make_unique<PostgresConnection>(uri);
}

}  // namespace harness
