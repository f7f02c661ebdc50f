// A rank's identity from each launcher's environment, the Slurm host list, the address Gloo
// listens on, and the framing of result files in stdout. Torch-free.
#include "runtime/protocol/rank_identity.h"

#include <gtest/gtest.h>

#include <map>

#include "runtime/protocol/result_frames.h"

namespace {

using runtime::IdentityFlags;
using runtime::IdentitySource;
using runtime::resolve_rank_identity;

runtime::EnvironmentLookup fake_env(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
}

std::string error_of(const IdentityFlags& flags, const runtime::EnvironmentLookup& env) {
  try {
    resolve_rank_identity(flags, env);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(RankIdentity, Torchrun) {
  const auto id = resolve_rank_identity({}, fake_env({{"RANK", "3"},
                                                      {"WORLD_SIZE", "8"},
                                                      {"LOCAL_RANK", "1"},
                                                      {"MASTER_ADDR", "node7"},
                                                      {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(id.source, IdentitySource::torchrun);
  EXPECT_EQ(id.rank, 3);
  EXPECT_EQ(id.world_size, 8);
  EXPECT_EQ(id.local_rank, 1);
  EXPECT_EQ(id.master_addr, "node7");
  EXPECT_EQ(id.master_port, 29500);
}

TEST(RankIdentity, SlurmTakesTheMasterFromTheFirstNodeOfTheStep) {
  const auto id = resolve_rank_identity({}, fake_env({{"SLURM_PROCID", "5"},
                                                      {"SLURM_NTASKS", "16"},
                                                      {"SLURM_LOCALID", "5"},
                                                      {"SLURM_JOB_NODELIST", "gpu[003-010],login1"},
                                                      {"MASTER_PORT", "1234"}}));
  EXPECT_EQ(id.source, IdentitySource::slurm);
  EXPECT_EQ(id.rank, 5);
  EXPECT_EQ(id.world_size, 16);
  EXPECT_EQ(id.local_rank, 5);
  EXPECT_EQ(id.master_addr, "gpu003");
  EXPECT_EQ(id.master_port, 1234);
  // The step's own list, when set, wins over the job's allocation.
  const auto step = resolve_rank_identity({}, fake_env({{"SLURM_PROCID", "0"},
                                                        {"SLURM_NTASKS", "2"},
                                                        {"SLURM_JOB_NODELIST", "a[1-4]"},
                                                        {"SLURM_STEP_NODELIST", "a[3-4]"}}));
  EXPECT_EQ(step.master_addr, "a3");
  EXPECT_EQ(step.local_rank, 0);  // SLURM_LOCALID unset
}

TEST(RankIdentity, OpenMpiWithTheMasterFromFlags) {
  IdentityFlags flags;
  flags.master_addr = "10.0.0.1";
  flags.master_port = 4000;
  const auto id = resolve_rank_identity(flags, fake_env({{"OMPI_COMM_WORLD_RANK", "1"},
                                                         {"OMPI_COMM_WORLD_SIZE", "2"},
                                                         {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                         {"MASTER_ADDR", "ignored"}}));
  EXPECT_EQ(id.source, IdentitySource::openmpi);
  EXPECT_EQ(id.rank, 1);
  EXPECT_EQ(id.world_size, 2);
  EXPECT_EQ(id.master_addr, "10.0.0.1");
  EXPECT_EQ(id.master_port, 4000);
}

TEST(RankIdentity, AutomaticPrefersTorchrunThenSlurmThenOpenMpi) {
  const std::map<std::string, std::string> all = {{"RANK", "1"},
                                                  {"WORLD_SIZE", "4"},
                                                  {"SLURM_PROCID", "2"},
                                                  {"SLURM_NTASKS", "4"},
                                                  {"OMPI_COMM_WORLD_RANK", "3"},
                                                  {"OMPI_COMM_WORLD_SIZE", "4"},
                                                  {"SLURM_JOB_NODELIST", "n1"}};
  EXPECT_EQ(resolve_rank_identity({}, fake_env(all)).rank, 1);
  auto without_torchrun = all;
  without_torchrun.erase("RANK");
  EXPECT_EQ(resolve_rank_identity({}, fake_env(without_torchrun)).rank, 2);
  // A named source is read even when another launcher's variables are present too.
  IdentityFlags flags;
  flags.source = IdentitySource::openmpi;
  EXPECT_EQ(resolve_rank_identity(flags, fake_env(all)).rank, 3);
}

TEST(RankIdentity, FlagsWinOverTheEnvironment) {
  IdentityFlags flags;
  flags.rank = 0;
  flags.world_size = 2;
  const auto id = resolve_rank_identity(flags, fake_env({{"RANK", "1"}, {"WORLD_SIZE", "2"}}));
  EXPECT_EQ(id.source, IdentitySource::flags);
  EXPECT_EQ(id.rank, 0);
  EXPECT_EQ(id.local_rank, 0);
  EXPECT_EQ(id.master_addr, "127.0.0.1");
  EXPECT_EQ(id.master_port, 0);
}

TEST(RankIdentity, ErrorsNameTheVariable) {
  EXPECT_EQ(error_of({}, fake_env({})).rfind("no rank identity: pass --rank and --world-size", 0),
            0u);
  EXPECT_EQ(error_of({}, fake_env({{"RANK", "x1"}, {"WORLD_SIZE", "2"}})),
            "environment variable RANK: expected a non-negative integer, got 'x1'");
  EXPECT_EQ(error_of({}, fake_env({{"RANK", "2"}, {"WORLD_SIZE", "2"}})),
            "rank 2 is outside a world of 2");
  IdentityFlags slurm;
  slurm.source = IdentitySource::slurm;
  EXPECT_EQ(error_of(slurm, fake_env({{"SLURM_PROCID", "0"}})),
            "rank identity from slurm: SLURM_NTASKS is not set");
  EXPECT_EQ(error_of(slurm, fake_env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}})),
            "rank identity from slurm: neither MASTER_ADDR nor SLURM_JOB_NODELIST is set");
  EXPECT_EQ(error_of({}, fake_env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}})),
            "master port 70000 is not a TCP port");
  EXPECT_THROW(runtime::parse_identity_source("mpi"), std::invalid_argument);
}

TEST(SlurmHostList, FirstHost) {
  EXPECT_EQ(runtime::first_slurm_host("node1"), "node1");
  EXPECT_EQ(runtime::first_slurm_host("a,b,c"), "a");
  EXPECT_EQ(runtime::first_slurm_host("node[07-09,12],gpu1"), "node07");
  EXPECT_EQ(runtime::first_slurm_host("node[12,3-5]"), "node12");
  EXPECT_EQ(runtime::first_slurm_host("rack1-[01-02]-ib"), "rack1-01-ib");
  EXPECT_THROW(runtime::first_slurm_host("node[1-2"), std::invalid_argument);
  EXPECT_THROW(runtime::first_slurm_host(""), std::invalid_argument);
}

TEST(GlooHost, LoopbackMasterGivesLoopbackAndTheVariableWins) {
  EXPECT_EQ(runtime::local_address_towards("127.0.0.1"), "127.0.0.1");
  runtime::RankIdentity id;
  id.master_addr = "127.0.0.1";
  EXPECT_EQ(runtime::gloo_interface_host(id, fake_env({})), "127.0.0.1");
  EXPECT_EQ(runtime::gloo_interface_host(id, fake_env({{"HARNESS_GLOO_HOST", "10.1.2.3"}})),
            "10.1.2.3");
  EXPECT_THROW(runtime::local_address_towards("no-such-host.invalid"), std::runtime_error);
}

TEST(ResultFrames, Base64MatchesTheRfcVectors) {
  // RFC 4648, section 10.
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(runtime::base64_encode(plain), encoded);
    EXPECT_EQ(runtime::base64_decode(encoded), plain);
  }
  EXPECT_THROW(runtime::base64_decode("Zm9"), std::invalid_argument);
  EXPECT_THROW(runtime::base64_decode("Zm=v"), std::invalid_argument);
}

TEST(ResultFrames, RoundTripThroughInterleavedOutput) {
  std::string binary;
  for (int i = 0; i < 300; ++i) binary += static_cast<char>(i % 256);
  const std::string csv = "iteration,forward_ms\n0,1.5\n1,1.25\n";
  const std::string text = "iteration 3 done loss 0.1\n" + runtime::frame_file("rank1.csv", csv) +
                           "some other line\n" + runtime::frame_file("trace_rank1.json", binary);
  const auto decoded = runtime::decode_frames(text);
  EXPECT_TRUE(decoded.errors.empty());
  ASSERT_EQ(decoded.files.size(), 2u);
  EXPECT_EQ(decoded.files.at("rank1.csv"), csv);
  EXPECT_EQ(decoded.files.at("trace_rank1.json"), binary);
  // FNV-1a 64 reference value of "a".
  EXPECT_EQ(runtime::fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(ResultFrames, DamageIsReportedNotWritten) {
  std::string frame = runtime::frame_file("rank0.csv", "iteration,forward_ms\n0,2.0\n");
  const auto at = frame.find('\n') + 3;
  frame[at] = frame[at] == 'A' ? 'B' : 'A';  // one flipped character in the body
  const auto damaged = runtime::decode_frames(frame);
  EXPECT_TRUE(damaged.files.empty());
  ASSERT_EQ(damaged.errors.size(), 1u);
  EXPECT_EQ(damaged.errors[0], "frame of 'rank0.csv' is damaged (size or checksum differ)");

  const std::string whole = runtime::frame_file("rank0.csv", "x");
  const auto cut = runtime::decode_frames(whole.substr(0, whole.find("@harness-end")));
  ASSERT_EQ(cut.errors.size(), 1u);
  EXPECT_EQ(cut.errors[0], "frame of 'rank0.csv' has no end");
  EXPECT_THROW(runtime::frame_file("../escape", "x"), std::invalid_argument);
}

TEST(ResultFrames, OnlyResultFilesAreNamed) {
  EXPECT_TRUE(runtime::is_result_file_name("rank12.csv"));
  EXPECT_TRUE(runtime::is_result_file_name("trace_rank0.json"));
  EXPECT_TRUE(runtime::is_result_file_name("pipeline_rank3.json"));
  EXPECT_TRUE(runtime::is_result_file_name("buckets.json"));
  EXPECT_FALSE(runtime::is_result_file_name("rank0.stdout"));
  EXPECT_FALSE(runtime::is_result_file_name("config.json"));
}

}  // namespace
