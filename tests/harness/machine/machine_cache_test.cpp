// harness machine's cache against a stand-in `harness-rank` (a /bin/sh script that logs each
// start and answers `version`, `machine` and `comm-worker` in the real one's shapes): a cache
// whose key is this machine's is read without measuring; one made with another BLAS, or asked
// to be measured again, is measured and rewritten under this machine's key.
#include "harness/machine/machine_limits.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/json_file.h"
#include "tests/test_util.h"

namespace {

using harness::RankProgram;
using harness_test::ScopedEnv;
using harness_test::TempDir;
using nlohmann::json;

// `version` and `machine` print their JSON; each `comm-worker` rank exits 0, and rank 0 writes
// one all-reduce of 1 MiB timed at 2 ms three times to its --out file.
std::string machine_stand_in(const TempDir& dir) {
  const std::string log = (dir.path() / "starts.log").string();
  const auto script = dir.write_program("harness-rank", R"(#!/bin/sh
echo "$1" >> ')" + log + R"('
case "$1" in
  version)
    echo '{"torch_version": "9.9.9", "cuda_devices": 0, "nccl": false,
           "blas": {"library": "openblas-pthread", "path": "/lib/libblas.so.3"}}' ;;
  machine) echo '{"cores": 2, "gemm_fp32": {"n": 1024, "gflops_one_core": 50}}' ;;
  comm-worker)
    rank=""; out=""
    while [ $# -gt 0 ]; do
      case "$1" in --rank) rank=$2; shift ;; --out) out=$2; shift ;; esac
      shift
    done
    if [ "$rank" = 0 ]; then
      echo '{"world_size": 2, "entries": [{"op": "allreduce", "bytes": 1048576,
             "times_ms": [2, 2, 2]}], "reference": []}' > "$out"
    fi ;;
  *) echo "error: unknown command $1" >&2; exit 2 ;;
esac
)");
  return script.string();
}

// A cache file holding `key` and a figure no measurement here makes.
std::filesystem::path cache_with_key(const TempDir& dir, const json& key) {
  return dir.write("machine.json", json{{"key", key}, {"cores", 64}}.dump());
}

TEST(MachineCache, AMatchingCacheIsReadWithoutMeasuring) {
  TempDir dir;
  RankProgram program(machine_stand_in(dir));
  const json key = harness::machine_key(program);
  EXPECT_EQ(key.value("blas_path", ""), "/lib/libblas.so.3");
  EXPECT_EQ(key.value("torch_version", ""), "9.9.9");
  const ScopedEnv cache("HARNESS_MACHINE_CACHE", cache_with_key(dir, key).string());
  const json limits = harness::machine_limits(program, /*remeasure=*/false);
  EXPECT_EQ(limits.value("cores", 0), 64);
  EXPECT_EQ(harness_test::file_lines(dir.path() / "starts.log"),
            std::vector<std::string>{"version"});  // the key's one question
}

TEST(MachineCache, ACacheOfAnotherBlasIsMeasuredAgainUnderThisMachinesKey) {
  TempDir dir;
  RankProgram program(machine_stand_in(dir));
  json other = harness::machine_key(program);
  other["blas_path"] = "/elsewhere/libblas.so.3";
  const auto file = cache_with_key(dir, other);
  const ScopedEnv cache("HARNESS_MACHINE_CACHE", file.string());
  const json limits = harness::machine_limits(program, /*remeasure=*/false);
  EXPECT_EQ(harness_test::file_lines(dir.path() / "starts.log"),
            (std::vector<std::string>{"version", "machine", "comm-worker", "comm-worker"}));
  EXPECT_EQ(limits.value("cores", 0), 2);
  EXPECT_EQ(limits["key"], harness::machine_key(program));
  // nccl-tests' bus bandwidth of an all-reduce between 2 ranks: 1 MiB / 2 ms, times 2(n-1)/n = 1.
  ASSERT_EQ(limits["allreduce_world2"].size(), 1u);
  EXPECT_EQ(limits["allreduce_world2"][0].value("bytes", 0), 1048576);
  EXPECT_DOUBLE_EQ(limits["allreduce_world2"][0].value("busbw_gbps", 0.0), 1048576 / 2e-3 / 1e9);
  // Rewritten under this machine's key: the next run reads it.
  EXPECT_EQ(harness::read_json_file(file), limits);
}

TEST(MachineCache, RemeasureIgnoresAMatchingCache) {
  TempDir dir;
  RankProgram program(machine_stand_in(dir));
  const ScopedEnv cache("HARNESS_MACHINE_CACHE",
                        cache_with_key(dir, harness::machine_key(program)).string());
  const json limits = harness::machine_limits(program, /*remeasure=*/true);
  EXPECT_EQ(limits.value("cores", 0), 2);
  EXPECT_EQ(harness_test::file_lines(dir.path() / "starts.log").size(), 4u);
}

}  // namespace
