// A history of benchmark results across commits, kept in a SQL database: SQLite by default
// (a file), PostgreSQL for a history several CI machines share. The schema, its version and
// every query live here, once; the engines differ only in their SqlConnection.
//
// Tables: history_schema (one row: the version), commits (sha, branch, time, position: the
// order of adds), environments (fingerprint key and description), metrics (benchmark, metric,
// unit, which way is better), additions (a commit measured in an environment: one per pair) and
// run_values (addition, metric, run, value).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "harness/history/history_records.h"
#include "harness/history/sql_connection.h"
#include "harness/history/sqlite_connection.h"

namespace harness {

inline constexpr int kHistorySchemaVersion = 2;

class HistoryStore {
 public:
  // Checks the schema version, creating the tables when the database is empty and `intent` is
  // write. Throws InputError for a database of another version or one that holds other tables.
  HistoryStore(std::unique_ptr<SqlConnection> connection, OpenIntent intent);

  // One transaction: all of the addition or nothing. A commit already measured in this
  // environment is refused (InputError, the database unchanged) unless `replace`, which swaps its
  // values and keeps its place in the order.
  void add(const HistoryAddition& addition, bool replace);

  // The whole history. A value the harness would not have written (a number that is not one, a
  // reference to no row, a name with control characters) is InputError "--db DB: COLUMN holds
  // ...", not a crash halfway through a report.
  History read();

  std::string description() const { return connection_->description(); }

 private:
  void create_or_check_schema(OpenIntent intent);
  void add_control_table();
  void insert_values(const char* table, long long addition, const std::vector<RunValue>& values,
                     std::map<MetricKey, long long>& metrics);
  History read_checked();
  // The rows' ids to what the history holds: environment and commit indexes, metrics.
  struct SeriesIndex {
    const std::map<long long, size_t>& environments;
    const std::map<long long, size_t>& commits;
    const std::map<long long, MetricKey>& metrics;
  };
  // Per (environment index, metric id), each commit's values in `table` (run_values or
  // control_values), gathered in one pass, every reference checked.
  using ValuesBySeries =
      std::map<std::pair<size_t, long long>, std::map<size_t, std::vector<double>>>;
  ValuesBySeries read_values(const std::string& table, const SeriesIndex& index);
  long long commit_id(const CommitInfo& commit);
  long long environment_id(const EnvironmentFingerprint& environment);
  long long metric_id(const MetricKey& key);

  std::unique_ptr<SqlConnection> connection_;
  bool has_controls_ = false;  // the control_values table exists (schema version 2)
};

// `db` is a file (SQLite) or a postgresql:// URI.
HistoryStore open_history(const std::string& db, OpenIntent intent);

}  // namespace harness
