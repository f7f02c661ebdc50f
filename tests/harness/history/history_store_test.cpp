#include "harness/history/history_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/input_error.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class HistoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("harness-history-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    db_ = (folder_ / "history.sqlite").string();
  }
  void TearDown() override { fs::remove_all(folder_); }

  static HistoryAddition addition(const std::string& sha, double base, int runs = 3,
                                  const std::string& environment = "e1") {
    HistoryAddition out;
    out.commit = {sha, "main", "2026-12-01T10:00:00+00:00"};
    out.environment = {environment, "machine " + environment};
    out.results = "results/" + sha;
    for (int run = 0; run < runs; ++run) {
      out.values.push_back(
          {{"exp / p / sys", "iteration p50", "ms", Better::lower}, run, base + run * 0.125});
    }
    out.values.push_back({{"exp / p / sys", "MFU", "%", Better::higher}, 0, 12.5});
    return out;
  }

  // A fresh history of one commit, then `sql` run on it as another program would.
  void one_commit_edited_by(const std::string& sql) {
    fs::remove(db_);
    open_history(db_, OpenIntent::write).add(addition("c1", 10), false);
    open_sqlite(db_, OpenIntent::write)->query(sql, {});
  }

  fs::path folder_;
  std::string db_;
};

TEST_F(HistoryStoreTest, ReadsBackWhatWasAddedInOrder) {
  {
    HistoryStore store = open_history(db_, OpenIntent::write);
    store.add(addition("c2", 10), false);
    store.add(addition("c1", 20, 2), false);
    store.add(addition("c1", 30, 1, "e2"), false);  // the same commit, another environment
  }
  HistoryStore store = open_history(db_, OpenIntent::read);
  const History history = store.read();
  ASSERT_EQ(history.commits.size(), 2u);
  EXPECT_EQ(history.commits[0].sha, "c2");  // the order of adds, not of names
  EXPECT_EQ(history.commits[1].sha, "c1");
  EXPECT_EQ(history.commits[0].branch, "main");
  EXPECT_EQ(history.commits[0].committed_utc, "2026-12-01T10:00:00+00:00");
  ASSERT_EQ(history.environments.size(), 2u);
  ASSERT_EQ(history.series.size(), 4u);  // 2 metrics x 2 environments
  const MetricSeries& p50 = history.series[1];
  EXPECT_EQ(p50.environment, 0u);
  EXPECT_EQ(p50.key.metric, "iteration p50");
  EXPECT_EQ(p50.key.unit, "ms");
  EXPECT_EQ(p50.key.better, Better::lower);
  ASSERT_EQ(p50.commits.size(), 2u);
  EXPECT_EQ(p50.commits[0].commit, 0u);
  EXPECT_EQ(p50.commits[0].runs, (std::vector<double>{10, 10.125, 10.25}));
  EXPECT_EQ(p50.commits[1].runs, (std::vector<double>{20, 20.125}));
  EXPECT_EQ(history.series[0].key.better, Better::higher);  // MFU
  EXPECT_EQ(history.series[3].commits.size(), 1u);          // e2 measured c1 only
  EXPECT_EQ(history.series[3].commits[0].runs, (std::vector<double>{30}));
}

TEST_F(HistoryStoreTest, ACommitTwiceIsRefusedUnlessReplacedAndNothingChanges) {
  HistoryStore store = open_history(db_, OpenIntent::write);
  store.add(addition("c1", 10), false);
  store.add(addition("c2", 11), false);
  try {
    store.add(addition("c1", 99), false);
    FAIL() << "a commit added twice";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("commit c1 is in the history already"));
    EXPECT_THAT(e.what(), HasSubstr("--replace"));
  }
  History history = store.read();
  EXPECT_EQ(history.series[1].commits[0].runs.front(), 10);
  store.add(addition("c1", 99, 1), true);
  history = store.read();
  ASSERT_EQ(history.commits.size(), 2u);
  EXPECT_EQ(history.commits[0].sha, "c1");  // keeps its place
  EXPECT_EQ(history.series[1].commits[0].runs, (std::vector<double>{99}));
}

TEST_F(HistoryStoreTest, ConcurrentAddsLoseNothing) {
  // Two writers (two connections, as two processes would have) at once.
  open_history(db_, OpenIntent::write);
  const auto writer = [&](const std::string& prefix) {
    HistoryStore store = open_history(db_, OpenIntent::write);
    for (int k = 0; k < 25; ++k) store.add(addition(prefix + std::to_string(k), k), false);
  };
  std::thread a(writer, "a"), b(writer, "b");
  a.join();
  b.join();
  const History history = open_history(db_, OpenIntent::read).read();
  EXPECT_EQ(history.commits.size(), 50u);
  EXPECT_EQ(history.series[1].commits.size(), 50u);
}

TEST_F(HistoryStoreTest, AnotherSchemaVersionIsRefused) {
  one_commit_edited_by("UPDATE history_schema SET version = 7");
  try {
    open_history(db_, OpenIntent::write);
    FAIL() << "schema 7 opened";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 7; this harness reads versions 1 and 2"));
  }
}

// Values the harness never writes, put there by another program: each is refused with the
// column it sits in, never a std::stod or map::at message.
TEST_F(HistoryStoreTest, ValuesWrittenOutsideTheHarnessAreNamedByTheirColumn) {
  struct Case {
    std::string sql, expected;
  };
  const std::vector<Case> cases = {
      {"UPDATE run_values SET value = 'abc' WHERE run = 1",
       "run_values.value holds 'abc', not a finite number"},
      {"UPDATE run_values SET value = 1e400 WHERE run = 1",
       "run_values.value holds 'inf', not a finite number"},
      {"UPDATE run_values SET metric_id = 99", "run_values.metric_id holds 99, which names no row"},
      {"UPDATE additions SET environment_id = 77",
       "additions.environment_id holds 77, which names no row"},
      {"UPDATE additions SET commit_id = 'x'", "additions.commit_id holds 'x', not an integer"},
      {"UPDATE commits SET sha = 'a|b'", "commits.sha holds 'a|b': has a '|'"},
      {"UPDATE commits SET branch = '-x'", "commits.branch holds '-x': starts with '-'"},
  };
  for (const Case& c : cases) {
    one_commit_edited_by(c.sql);
    try {
      open_history(db_, OpenIntent::read).read();
      ADD_FAILURE() << "read: " << c.sql;
    } catch (const InputError& e) {
      EXPECT_EQ(e.what(),
                "--db SQLite " + db_ + ": " + c.expected + " (changed outside the harness?)");
    }
  }
  // A commit time nobody knew is stored empty, and read back so.
  one_commit_edited_by("UPDATE commits SET committed_utc = ''");
  EXPECT_EQ(open_history(db_, OpenIntent::read).read().commits[0].committed_utc, "");
  one_commit_edited_by("UPDATE history_schema SET version = 'v'");
  try {
    open_history(db_, OpenIntent::read);
    ADD_FAILURE() << "a schema version 'v' opened";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("history_schema.version holds 'v', not an integer"));
  }
}

TEST_F(HistoryStoreTest, AControlIsKeptBesideItsAdditionAndJudgedAsTheRatio) {
  {
    HistoryStore store = open_history(db_, OpenIntent::write);
    HistoryAddition with = addition("c1", 10);
    with.control_values = addition("c1", 5).values;  // iteration p50 runs 5, 5.125, 5.25
    store.add(with, false);
    store.add(addition("c2", 20), false);  // no control
  }
  const History history = open_history(db_, OpenIntent::read).read();
  const MetricSeries* p50 = nullptr;
  for (const auto& series : history.series) {
    if (series.key.metric == "iteration p50") p50 = &series;
  }
  ASSERT_NE(p50, nullptr);
  EXPECT_TRUE(p50->against_control);
  EXPECT_EQ(p50->commits_without_control, 1u);  // c2
  ASSERT_EQ(p50->commits.size(), 1u);
  // c1's runs 10, 10.125, 10.25 over the control's median 5.125.
  EXPECT_NEAR(p50->commits[0].runs[0], 10 / 5.125, 1e-12);
  EXPECT_NEAR(p50->commits[0].runs[2], 10.25 / 5.125, 1e-12);
}

// A history of schema version 1 (before controls) is read as it is; an add gives it the
// control table, and an add that is refused leaves it at version 1.
TEST_F(HistoryStoreTest, AVersionOneHistoryIsReadAndUpgradedOnlyByAnAdd) {
  open_history(db_, OpenIntent::write).add(addition("c1", 10), false);
  {
    auto sql = open_sqlite(db_, OpenIntent::write);
    sql->query("DROP TABLE control_values", {});
    sql->query("UPDATE history_schema SET version = 1", {});
  }
  const auto version = [&] {
    return open_sqlite(db_, OpenIntent::read)
        ->query("SELECT version FROM history_schema", {})[0][0]
        .value_or("");
  };
  EXPECT_EQ(open_history(db_, OpenIntent::read).read().commits.size(), 1u);
  EXPECT_THROW(open_history(db_, OpenIntent::write).add(addition("c1", 10), false), InputError);
  EXPECT_EQ(version(), "1");
  open_history(db_, OpenIntent::write).add(addition("c2", 10), false);
  EXPECT_EQ(version(), "2");
  EXPECT_EQ(open_history(db_, OpenIntent::read).read().commits.size(), 2u);
}

TEST_F(HistoryStoreTest, ACorruptFileIsRefusedAndLeftAsItWas) {
  {
    std::ofstream out(db_);
    out << "this is not a database, though it is long enough to look like one at a glance....";
  }
  const auto size = fs::file_size(db_);
  try {
    open_history(db_, OpenIntent::write);
    FAIL() << "a corrupt file opened";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("file is not a database"));
  }
  EXPECT_EQ(fs::file_size(db_), size);
}

TEST_F(HistoryStoreTest, AnotherDatabaseOrNoneIsNotAHistory) {
  open_sqlite(db_, OpenIntent::write)->query("CREATE TABLE people (name TEXT)", {});
  try {
    open_history(db_, OpenIntent::write);
    FAIL() << "another database opened as a history";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds tables (people, ...) but no history_schema"));
  }
  try {
    open_history((folder_ / "none.sqlite").string(), OpenIntent::read);
    FAIL() << "a missing history opened for reading";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no such history"));
  }
  EXPECT_FALSE(fs::exists(folder_ / "none.sqlite"));
}

}  // namespace
}  // namespace harness
