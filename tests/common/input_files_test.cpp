// The bounded readers every input file goes through: YAML walked with a bound (alias loops,
// depth, values counted through aliases, duplicate keys), JSON fields typed and ranged, names
// that become folders, output folders made before any work.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_fields.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "common/yaml_file.h"
#include "tests/test_util.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The InputError message of `action`, or "" when it threw none.
template <typename Action>
std::string error_of(Action&& action) {
  return harness_test::thrown_message<InputError>(std::forward<Action>(action));
}

std::string yaml_error(const std::string& text) {
  return error_of([&] { parse_yaml_text(text, "spec.yaml"); });
}

TEST(YamlBounds, AnAliasInsideTheMapItNamesIsALoopNamedWhereTheAliasIs) {
  EXPECT_EQ(yaml_error("a: 1\nsweep: &a {x: *a}\n"),
            "spec.yaml:2:12: an alias refers to a map or list that contains it (an alias loop)");
  // The merge-key form: `<<` is a plain key to yaml-cpp, so the map contains itself.
  EXPECT_EQ(yaml_error("model: &m {name: mlp, <<: *m}\n"),
            "spec.yaml:1:23: an alias refers to a map or list that contains it (an alias loop)");
  EXPECT_NE(yaml_error("- &l [1, *l]\n").find("an alias loop"), std::string::npos);
  // A loop two levels down.
  EXPECT_NE(yaml_error("a: &a {b: {c: [*a]}}\n").find("an alias loop"), std::string::npos);
}

TEST(YamlBounds, AnAliasUsedBesideItsAnchorIsFine) {
  EXPECT_EQ(yaml_error("base: &b {x: 1}\none: *b\ntwo: {copy: *b}\n"), "");
}

TEST(YamlBounds, NestingIsBoundedAtTheLimitExactly) {
  auto nested = [](int levels) {
    std::string text;
    for (int i = 0; i < levels; ++i) text += "[";
    for (int i = 0; i < levels; ++i) text += "]";
    return text;
  };
  EXPECT_EQ(yaml_error(nested(kMaxYamlDepth)), "");
  EXPECT_EQ(yaml_error(nested(kMaxYamlDepth + 1)),
            "spec.yaml:1:" + std::to_string(kMaxYamlDepth + 1) + ": nested deeper than " +
                std::to_string(kMaxYamlDepth) + " levels");
}

TEST(YamlBounds, ValuesAreCountedThroughAliases) {
  // Ten lists of ten aliases of the one before: 10^6 values for a walk, 300 bytes of text.
  std::string text = "l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i <= 6; ++i) {
    const std::string previous = "*l" + std::to_string(i - 1);
    text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + previous;
    text += "]\n";
  }
  const std::string error = yaml_error(text);
  EXPECT_NE(error.find("more than " + std::to_string(kMaxYamlNodes) + " values"), std::string::npos)
      << error;
}

TEST(YamlBounds, ADuplicateKeyIsNamedWhereItIsSaidAgain) {
  EXPECT_EQ(yaml_error("a: 1\nb:\n  c: 2\n  c: 3\n"),
            "spec.yaml:4:3: duplicate key 'c' (first at line 3)");
}

TEST(YamlBounds, SyntaxErrorsCarryTheirPosition) {
  EXPECT_EQ(yaml_error("a: [1, 2\n").rfind("spec.yaml:", 0), 0u);
  EXPECT_NE(yaml_error("a: [1, 2\n").find("YAML syntax error"), std::string::npos);
}

TEST(YamlFile, MissingAndOversizedFilesAreRefused) {
  const fs::path dir = fs::temp_directory_path() / ("yaml-file-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  EXPECT_EQ(error_of([&] { read_yaml_file(dir / "none.yaml"); }),
            (dir / "none.yaml").string() + ": cannot open file");
  {
    std::ofstream big(dir / "big.yaml");
    big.seekp(kMaxInputFileBytes);
    big << "a: 1\n";
  }
  EXPECT_EQ(error_of([&] { read_yaml_file(dir / "big.yaml"); }),
            (dir / "big.yaml").string() + ": larger than 64 MiB");
  fs::remove_all(dir);
}

// A FIFO would block the read before; /dev/zero was read until std::bad_alloc.
TEST(InputFile, OnlyRegularFilesAreRead) {
  const fs::path dir = fs::temp_directory_path() / ("input-file-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  ASSERT_EQ(mkfifo((dir / "fifo.yaml").c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { read_yaml_file(dir / "fifo.yaml"); }),
            (dir / "fifo.yaml").string() + ": not a regular file");
  EXPECT_EQ(error_of([&] { read_json_file("/dev/zero"); }), "/dev/zero: not a regular file");
  EXPECT_EQ(error_of([&] { read_json_file(dir); }),
            dir.string() + ": not a regular file (a folder)");
  std::ofstream(dir / "small.json") << R"({"a": 1})";
  EXPECT_EQ(read_json_file(dir / "small.json")["a"], 1);
  fs::remove_all(dir);
}

TEST(JsonFields, IntegersAreTypedAndRanged) {
  const JsonFields fields("m.json");
  const json doc =
      parse_json(R"({"p": {"n": -2, "s": "x", "f": 1.5, "big": 18446744073709551615}})");
  EXPECT_EQ(error_of([&] { fields.integer(doc["p"], "p", "n", 1, 10); }),
            "m.json: p.n: expected an integer in [1, 10], got -2");
  EXPECT_EQ(error_of([&] { fields.integer(doc["p"], "p", "s", 1, 10); }),
            "m.json: p.s: expected an integer in [1, 10], got \"x\"");
  EXPECT_EQ(error_of([&] { fields.integer(doc["p"], "p", "f", 1, 10); }),
            "m.json: p.f: expected an integer in [1, 10], got 1.5");
  EXPECT_EQ(error_of([&] { fields.integer(doc["p"], "p", "big", 1, 10); }),
            "m.json: p.big: expected an integer in [1, 10], got 18446744073709551615");
  EXPECT_EQ(error_of([&] { fields.integer(doc["p"], "p", "gone", 1, 10); }),
            "m.json: p.gone: missing");
  EXPECT_EQ(error_of([&] { fields.integer(doc["p"]["n"], "p.n", "x", 1, 10); }),
            "m.json: p.n: expected an object, got -2");
}

TEST(JsonFields, NamesThatBecomeFoldersFollowTheFolderRule) {
  const JsonFields fields("m.json");
  EXPECT_EQ(error_of([&] {
              fields.folder_name(json{{"n", "../up"}}, "", "n");
            }),
            "m.json: n: cannot name a folder: starts with '.'");
  EXPECT_EQ(fields.folder_name(json{{"n", "overlap-25mb"}}, "", "n"), "overlap-25mb");
  EXPECT_EQ(error_of([&] {
              fields.array(json{{"a", json::array({1, 2, 3})}}, "", "a", 2);
            }),
            "m.json: a: more than 2 entries (3)");
}

TEST(FolderName, EachReasonIsNamed) {
  EXPECT_EQ(folder_name_problem("ci_regression"), "");
  EXPECT_EQ(folder_name_problem(""), "empty");
  EXPECT_EQ(folder_name_problem(std::string(kMaxNameLength, 'n')), "");
  EXPECT_EQ(folder_name_problem(std::string(kMaxNameLength + 1, 'n')), "longer than 128 bytes");
  EXPECT_EQ(folder_name_problem(".hidden"), "starts with '.'");
  EXPECT_EQ(folder_name_problem("a/b"), "has a '/'");
  EXPECT_EQ(folder_name_problem("a b"), "has a blank");
  EXPECT_EQ(folder_name_problem("a\nb"), "has a control character");
  EXPECT_EQ(folder_name_problem(std::string("a\0b", 3)), "has a control character");
}

TEST(OutputFolder, AFolderThatCannotBeMadeIsBadInputAndNothingIsLeft) {
  const fs::path dir = fs::temp_directory_path() / ("out-folder-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "x";
  EXPECT_EQ(
      error_of([&] { create_output_folder(dir / "file" / "out", "--out"); }),
      "--out '" + (dir / "file" / "out").string() + "': cannot create folder: Not a directory");
  EXPECT_EQ(error_of([&] { create_output_folder(dir / "file", "--out"); }),
            "--out '" + (dir / "file").string() + "': cannot create folder: Not a directory");
  create_output_folder(dir / "made" / "deep", "--out");
  EXPECT_TRUE(fs::is_directory(dir / "made" / "deep"));
  EXPECT_TRUE(fs::is_empty(dir / "made" / "deep"));  // the probe file is gone
  fs::remove_all(dir);
}

TEST(OutputFile, APlaceThatCannotTakeTheFileIsBadInputAndNothingIsMade) {
  const fs::path dir = fs::temp_directory_path() / ("out-file-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "x";
  EXPECT_EQ(error_of([&] { check_output_file(dir / "file" / "x.md", "--out"); }),
            "--out '" + (dir / "file" / "x.md").string() + "': cannot write there: '" +
                (dir / "file").string() + "' is not a folder");
  EXPECT_EQ(error_of([&] { check_output_file("/proc/x.md", "--json"); }),
            "--json '/proc/x.md': cannot write there: '/proc' takes no files");
  EXPECT_EQ(error_of([&] { check_output_file(dir, "--out"); }),
            "--out '" + dir.string() + "': is a folder, not a file");
  // A place under folders still to be made is fine, and checking makes none of them.
  EXPECT_EQ(error_of([&] { check_output_file(dir / "new" / "deep" / "x.md", "--out"); }), "");
  EXPECT_EQ(error_of([&] { check_output_place(dir, "--out"); }), "");
  EXPECT_FALSE(fs::exists(dir / "new"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no probe
  fs::remove_all(dir);
}

}  // namespace
TEST(TextFormat, FixedKeepsItsDigitsNumberDropsTrailingZeros) {
  EXPECT_EQ(harness::format_fixed(2.5, 2), "2.50");
  EXPECT_EQ(harness::format_fixed(1234.5678, 1), "1234.6");
  EXPECT_EQ(harness::format_fixed(-0.004, 2), "-0.00");
  EXPECT_EQ(harness::format_number(2.5, 2), "2.5");
  EXPECT_EQ(harness::format_number(-0.004, 2), "0");
  EXPECT_EQ(harness::format_number(3.0), "3");
}

TEST(JsonText, DumpIndentsAsAskedAndParseReadsItBack) {
  const json doc = {{"a", 1}, {"b", {1.5, "x"}}};
  EXPECT_EQ(json_text(doc), R"({"a":1,"b":[1.5,"x"]})");
  EXPECT_EQ(json_text(doc, 1), "{\n \"a\": 1,\n \"b\": [\n  1.5,\n  \"x\"\n ]\n}");
  EXPECT_EQ(parse_json(json_text(doc, 2)), doc);
  // A view is read to its length, not to a terminating NUL.
  EXPECT_EQ(parse_json(std::string_view("[1,2]garbage", 5)), json::array({1, 2}));
}

TEST(JsonText, MalformedTextThrowsNlohmannsErrorWithItsPosition) {
  try {
    parse_json("{\"a\": 1,\n \"b\": }");
    FAIL() << "parsed";
  } catch (const json::parse_error& e) {
    EXPECT_EQ(e.byte, 16u);  // the '}' where a value should be
  }
  EXPECT_THROW(parse_json("[1e999]"), json::out_of_range);
}

}  // namespace harness
