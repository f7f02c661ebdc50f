#include "harness/history/history_store.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "common/identifier_checks.h"
#include "common/input_error.h"
#include "common/utc_time.h"
#include "harness/history/control_ratio.h"
#include "harness/history/postgres_connection.h"

namespace harness {

namespace {

// Schema version 2: the values of a control measured beside an addition (history add --control).
// A version 1 history has none; it is read as it is, and given the table when it is written.
constexpr const char* kControlTable =
    "CREATE TABLE IF NOT EXISTS control_values (addition_id BIGINT NOT NULL REFERENCES additions "
    "(id), metric_id BIGINT NOT NULL REFERENCES metrics (id), run INTEGER NOT NULL, value DOUBLE "
    "PRECISION NOT NULL)";
constexpr long long kSchemaWithoutControls = 1;

std::vector<std::string> schema_statements(const std::string& key) {
  return {
      "CREATE TABLE IF NOT EXISTS history_schema (version INTEGER NOT NULL)",
      "CREATE TABLE IF NOT EXISTS commits (id " + key +
          ", sha TEXT NOT NULL UNIQUE, branch TEXT NOT NULL, committed_utc TEXT NOT NULL, "
          "added_utc TEXT NOT NULL, position INTEGER NOT NULL)",
      "CREATE TABLE IF NOT EXISTS environments (id " + key +
          ", fingerprint TEXT NOT NULL UNIQUE, description TEXT NOT NULL)",
      "CREATE TABLE IF NOT EXISTS metrics (id " + key +
          ", benchmark TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL, "
          "better TEXT NOT NULL, UNIQUE (benchmark, metric))",
      "CREATE TABLE IF NOT EXISTS additions (id " + key +
          ", commit_id BIGINT NOT NULL REFERENCES commits (id), environment_id BIGINT NOT NULL "
          "REFERENCES environments (id), results TEXT NOT NULL, added_utc TEXT NOT NULL, "
          "UNIQUE (commit_id, environment_id))",
      "CREATE TABLE IF NOT EXISTS run_values (addition_id BIGINT NOT NULL REFERENCES additions "
      "(id), metric_id BIGINT NOT NULL REFERENCES metrics (id), run INTEGER NOT NULL, value "
      "DOUBLE PRECISION NOT NULL)",
      "CREATE INDEX IF NOT EXISTS run_values_by_addition ON run_values (addition_id)",
      kControlTable,
      "CREATE INDEX IF NOT EXISTS control_values_by_addition ON control_values (addition_id)",
  };
}

const char* const kTables[] = {"history_schema", "commits",   "environments",
                               "metrics",        "additions", "run_values"};

std::string text_of(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

long long integer_of(const SqlValue& value) { return value ? std::stoll(*value) : 0; }

// What the history read back must be: the harness wrote integers, finite numbers and checked
// names, so anything else was written outside it and is refused, named by table and column
// (InputError "COLUMN holds 'TEXT', not ...").
long long stored_integer(const SqlValue& value, const char* column) {
  const std::string text = value.value_or("NULL");
  long long number = 0;
  const char* end = text.data() + text.size();
  const auto [last, error] = std::from_chars(text.data(), end, number);
  if (!value || error != std::errc() || last != end) {
    throw InputError(std::string(column) + " holds '" + text + "', not an integer");
  }
  return number;
}

double stored_number(const SqlValue& value, const char* column) {
  const std::string text = value.value_or("NULL");
  char* last = nullptr;
  const double number = value ? std::strtod(text.c_str(), &last) : 0.0;
  if (!value || last != text.c_str() + text.size() || text.empty() || !std::isfinite(number)) {
    throw InputError(std::string(column) + " holds '" + text + "', not a finite number");
  }
  return number;
}

std::string stored_name(const SqlValue& value, const char* column,
                        std::string (*problem)(std::string_view)) {
  const std::string text = value.value_or("");
  if (const std::string why = problem(text); !why.empty()) {
    throw InputError(std::string(column) + " holds '" + text + "': " + why);
  }
  return text;
}

// A commits row: the branch and the commit time may be empty (unknown); ISO 8601 from git or
// --commit-time, or the run's own stamp, otherwise.
StoredCommit stored_commit(const SqlRow& row) {
  const auto optional = [&](size_t column, const char* name,
                            std::string (*problem)(std::string_view)) {
    return row[column].value_or("").empty() ? std::string()
                                            : stored_name(row[column], name, problem);
  };
  return {stored_name(row[1], "commits.sha", revision_name_problem),
          optional(2, "commits.branch", revision_name_problem),
          optional(3, "commits.committed_utc", label_problem), row[4].value_or("")};
}

template <typename Index>
const typename Index::mapped_type& stored_reference(const Index& index, const SqlValue& value,
                                                    const char* column) {
  const auto found = index.find(stored_integer(value, column));
  if (found == index.end()) {
    throw InputError(std::string(column) + " holds " + value.value_or("NULL") +
                     ", which names no row");
  }
  return found->second;
}

std::vector<std::string> table_names(SqlConnection& connection) {
  std::vector<std::string> names;
  for (const SqlRow& row : connection.query(connection.table_names_query(), {})) {
    names.push_back(row[0].value_or(""));
  }
  return names;
}

// Every statement of an add inside one transaction, rolled back when anything throws.
class Transaction {
 public:
  explicit Transaction(SqlConnection& connection) : connection_(connection) { connection.begin(); }
  ~Transaction() {
    if (!done_) {
      try {
        connection_.rollback();
      } catch (...) {
      }
    }
  }
  void commit() {
    connection_.commit();
    done_ = true;
  }

 private:
  SqlConnection& connection_;
  bool done_ = false;
};

}  // namespace

const char* to_string(Better better) { return better == Better::lower ? "lower" : "higher"; }

Better better_from_string(const std::string& text) {
  if (text == "lower") return Better::lower;
  if (text == "higher") return Better::higher;
  throw InputError("history: a metric's direction '" + text + "' is neither lower nor higher");
}

HistoryStore::HistoryStore(std::unique_ptr<SqlConnection> connection, OpenIntent intent)
    : connection_(std::move(connection)) {
  create_or_check_schema(intent);
  if (intent == OpenIntent::write) connection_->prepare_for_writers();
}

void HistoryStore::create_or_check_schema(OpenIntent intent) {
  const std::vector<std::string> tables = table_names(*connection_);
  const auto has = [&](const std::string& name) {
    return std::find(tables.begin(), tables.end(), name) != tables.end();
  };
  if (!has("history_schema")) {
    if (!tables.empty()) {
      throw InputError("--db " + description() + ": holds tables (" + tables.front() +
                       ", ...) but no history_schema: not a history");
    }
    if (intent == OpenIntent::read) {
      throw InputError("--db " + description() +
                       ": an empty database, not a history yet "
                       "(harness history add makes one)");
    }
    Transaction transaction(*connection_);
    for (const std::string& sql : schema_statements(connection_->auto_key())) {
      connection_->query(sql, {});
    }
    if (connection_->query("SELECT version FROM history_schema", {}).empty()) {
      connection_->query("INSERT INTO history_schema (version) VALUES (?)",
                         {std::to_string(kHistorySchemaVersion)});
    }
    transaction.commit();
    has_controls_ = true;
    return;
  }
  const std::vector<SqlRow> rows = connection_->query("SELECT version FROM history_schema", {});
  if (rows.size() != 1 || !rows[0][0]) {
    throw InputError("--db " + description() + ": history_schema holds " +
                     std::to_string(rows.size()) + " rows, not one version");
  }
  long long version = 0;
  try {
    version = stored_integer(rows[0][0], "history_schema.version");
  } catch (const InputError& e) {
    throw InputError("--db " + description() + ": " + e.what());
  }
  if (version != kHistorySchemaVersion && version != kSchemaWithoutControls) {
    throw InputError("--db " + description() + ": a history of schema version " +
                     std::to_string(version) + "; this harness reads versions " +
                     std::to_string(kSchemaWithoutControls) + " and " +
                     std::to_string(kHistorySchemaVersion));
  }
  for (const char* table : kTables) {
    if (!has(table)) {
      throw InputError("--db " + description() + ": a history without its table " + table);
    }
  }
  has_controls_ = version == kHistorySchemaVersion;
  if (has_controls_ && !has("control_values")) {
    throw InputError("--db " + description() + ": a history without its table control_values");
  }
}

// Inside an add's transaction: a refused add leaves a version 1 history as it was.
void HistoryStore::add_control_table() {
  connection_->query(kControlTable, {});
  connection_->query(
      "CREATE INDEX IF NOT EXISTS control_values_by_addition ON control_values (addition_id)", {});
  connection_->query("UPDATE history_schema SET version = ?",
                     {std::to_string(kHistorySchemaVersion)});
}

long long HistoryStore::commit_id(const CommitInfo& commit) {
  const auto found = connection_->query("SELECT id FROM commits WHERE sha = ?", {commit.sha});
  if (!found.empty()) return integer_of(found[0][0]);
  const auto last = connection_->query("SELECT MAX(position) FROM commits", {});
  const long long position = last.empty() || !last[0][0] ? 0 : integer_of(last[0][0]) + 1;
  return integer_of(connection_->query(
      "INSERT INTO commits (sha, branch, committed_utc, added_utc, position) VALUES (?, ?, ?, ?, "
      "?) RETURNING id",
      {commit.sha, commit.branch, commit.committed_utc, utc_timestamp_compact(),
       std::to_string(position)})[0][0]);
}

long long HistoryStore::environment_id(const EnvironmentFingerprint& environment) {
  const auto found =
      connection_->query("SELECT id FROM environments WHERE fingerprint = ?", {environment.key});
  if (!found.empty()) return integer_of(found[0][0]);
  return integer_of(connection_->query(
      "INSERT INTO environments (fingerprint, description) VALUES (?, ?) RETURNING id",
      {environment.key, environment.description})[0][0]);
}

long long HistoryStore::metric_id(const MetricKey& key) {
  const auto found = connection_->query("SELECT id FROM metrics WHERE benchmark = ? AND metric = ?",
                                        {key.benchmark, key.metric});
  if (!found.empty()) return integer_of(found[0][0]);
  return integer_of(connection_->query(
      "INSERT INTO metrics (benchmark, metric, unit, better) VALUES (?, ?, ?, ?) RETURNING id",
      {key.benchmark, key.metric, key.unit, std::string(to_string(key.better))})[0][0]);
}

void HistoryStore::add(const HistoryAddition& addition, bool replace) {
  Transaction transaction(*connection_);
  if (!has_controls_) add_control_table();
  const long long commit = commit_id(addition.commit);
  const long long environment = environment_id(addition.environment);
  const auto existing = connection_->query(
      "SELECT id, results FROM additions WHERE commit_id = ? AND environment_id = ?",
      {std::to_string(commit), std::to_string(environment)});
  if (!existing.empty()) {
    if (!replace) {
      throw InputError("commit " + addition.commit.sha +
                       " is in the history already for this environment (from " +
                       existing[0][1].value_or("?") +
                       "); --replace replaces its values, the history otherwise unchanged");
    }
    const std::string id = existing[0][0].value_or("0");
    connection_->query("DELETE FROM run_values WHERE addition_id = ?", {id});
    connection_->query("DELETE FROM control_values WHERE addition_id = ?", {id});
    connection_->query("DELETE FROM additions WHERE id = ?", {id});
  }
  const long long added = integer_of(connection_->query(
      "INSERT INTO additions (commit_id, environment_id, results, added_utc) VALUES (?, ?, ?, ?) "
      "RETURNING id",
      {std::to_string(commit), std::to_string(environment), addition.results,
       utc_timestamp_compact()})[0][0]);
  std::map<MetricKey, long long> metrics;
  insert_values("run_values", added, addition.values, metrics);
  insert_values("control_values", added, addition.control_values, metrics);
  transaction.commit();
}

void HistoryStore::insert_values(const char* table, long long addition,
                                 const std::vector<RunValue>& values,
                                 std::map<MetricKey, long long>& metrics) {
  std::vector<std::vector<SqlValue>> rows;
  rows.reserve(values.size());
  for (const RunValue& value : values) {
    auto found = metrics.find(value.key);
    if (found == metrics.end()) found = metrics.emplace(value.key, metric_id(value.key)).first;
    rows.push_back({std::to_string(addition), std::to_string(found->second),
                    std::to_string(value.run), text_of(value.value)});
  }
  if (rows.empty()) return;
  connection_->execute_many(std::string("INSERT INTO ") + table +
                                " (addition_id, metric_id, run, value) VALUES (?, ?, ?, ?)",
                            rows);
}

History HistoryStore::read() {
  try {
    return read_checked();
  } catch (const InputError& e) {
    throw InputError("--db " + description() + ": " + e.what() + " (changed outside the harness?)");
  }
}

History HistoryStore::read_checked() {
  History history;
  std::map<long long, size_t> commit_index, environment_index;
  for (const SqlRow& row : connection_->query(
           "SELECT id, sha, branch, committed_utc, added_utc FROM commits ORDER BY position, id",
           {})) {
    commit_index[stored_integer(row[0], "commits.id")] = history.commits.size();
    history.commits.push_back(stored_commit(row));
  }
  for (const SqlRow& row : connection_->query(
           "SELECT id, fingerprint, description FROM environments ORDER BY id", {})) {
    environment_index[stored_integer(row[0], "environments.id")] = history.environments.size();
    history.environments.push_back({row[1].value_or(""), row[2].value_or("")});
  }
  std::map<long long, MetricKey> metrics;
  for (const SqlRow& row :
       connection_->query("SELECT id, benchmark, metric, unit, better FROM metrics", {})) {
    metrics[stored_integer(row[0], "metrics.id")] = {row[1].value_or(""), row[2].value_or(""),
                                                     row[3].value_or(""),
                                                     better_from_string(row[4].value_or(""))};
  }
  const SeriesIndex index{environment_index, commit_index, metrics};
  ValuesBySeries gathered = read_values("run_values", index);
  const ValuesBySeries controls =
      has_controls_ ? read_values("control_values", index) : ValuesBySeries{};
  for (auto& [where, by_commit] : gathered) {
    MetricSeries series{where.first, metrics.at(where.second), {}};
    for (auto& [commit, runs] : by_commit) series.commits.push_back({commit, std::move(runs)});
    const auto control = controls.find(where);
    history.series.push_back(control == controls.end() ? std::move(series)
                                                       : against_control(series, control->second));
  }
  std::sort(history.series.begin(), history.series.end(),
            [](const MetricSeries& a, const MetricSeries& b) {
              if (a.environment != b.environment) return a.environment < b.environment;
              return a.key < b.key;
            });
  return history;
}

HistoryStore::ValuesBySeries HistoryStore::read_values(const std::string& table,
                                                       const SeriesIndex& index) {
  ValuesBySeries values;
  const std::string metric_column = table + ".metric_id", value_column = table + ".value";
  for (const SqlRow& row : connection_->query(
           "SELECT a.environment_id, a.commit_id, v.metric_id, v.value FROM " + table +
               " v JOIN additions a ON v.addition_id = a.id ORDER BY v.addition_id, v.metric_id, "
               "v.run",
           {})) {
    const size_t environment =
        stored_reference(index.environments, row[0], "additions.environment_id");
    const size_t commit = stored_reference(index.commits, row[1], "additions.commit_id");
    stored_reference(index.metrics, row[2], metric_column.c_str());
    values[{environment, stored_integer(row[2], metric_column.c_str())}][commit].push_back(
        stored_number(row[3], value_column.c_str()));
  }
  return values;
}

HistoryStore open_history(const std::string& db, OpenIntent intent) {
  // SQLite opens "" as a temporary database, which an add would fill and lose.
  if (db.empty()) throw InputError("--db: expected a SQLite file or a postgresql:// URI (got '')");
  if (is_postgres_uri(db)) return HistoryStore(open_postgres(db), intent);
  return HistoryStore(open_sqlite(db, intent), intent);
}

}  // namespace harness
