// Profiles as files: sizes and bus factors of the communication profiler, its fitted model
// and topology file (read back by the planner), and the PipeDream graph writer (imported back
// by the planner with the expected states and totals).
#include <gtest/gtest.h>

#include "common/input_error.h"
#include "harness/profile/comm_profile.h"
#include "planner/cluster/topology.h"
#include "planner/model/model_profile.h"
#include "planner/model/pipedream_graph_writer.h"
#include "tests/test_util.h"

namespace {

using harness::InputError;

TEST(CommProfile, ParsesSizesAndRanges) {
  EXPECT_EQ(harness::parse_byte_size("8"), 8);
  EXPECT_EQ(harness::parse_byte_size("4K"), 4096);
  EXPECT_EQ(harness::parse_byte_size("256M"), 256LL << 20);
  EXPECT_EQ(harness::parse_byte_size("1G"), 1LL << 30);
  EXPECT_EQ(harness::parse_size_range("8:64:x2"), (std::vector<int64_t>{8, 16, 32, 64}));
  EXPECT_EQ(harness::parse_size_range("1M:3M:+1M"),
            (std::vector<int64_t>{1 << 20, 2 << 20, 3 << 20}));
  EXPECT_EQ(harness::parse_size_range("1K,4K"), (std::vector<int64_t>{1024, 4096}));
  EXPECT_EQ(harness::parse_size_range("8:256M:x2").size(), 26u);  // 2^3 .. 2^28
  try {
    harness::parse_byte_size("12Q");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "size '12Q': unknown unit 'Q' (use K, M or G)");
  }
  EXPECT_THROW(harness::parse_size_range("64:8:x2"), InputError);
  EXPECT_THROW(harness::parse_size_range("8:64:x1"), InputError);
}

// Limits (common/limits.h): a typo in --sizes is an error, not a 1e9-entry list or a 4-byte
// measurement of an overflowed number.
TEST(CommProfile, SizesAreBounded) {
  auto message = [](const std::string& text) {
    return harness_test::thrown_message<InputError>([&] { harness::parse_size_range(text); });
  };
  EXPECT_EQ(message("8:1G:+1"),
            "sizes '8:1G:+1': more than 64 sizes (use a larger factor or step)");
  EXPECT_EQ(message("99999999999999999999"),
            "size '99999999999999999999': at most 1G (1073741824 bytes) per message");
  EXPECT_EQ(message("8:2G:x2"), "size '2G': at most 1G (1073741824 bytes) per message");
  EXPECT_EQ(message("8:64:xlots"), "sizes '8:64:xlots': the factor must be a number > 1");
  EXPECT_EQ(harness::parse_size_range("1:1G:x2").size(), 31u);  // 2^0 .. 2^30, within both
}

TEST(CommProfile, BusFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(harness::bus_factor("allreduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(harness::bus_factor("allreduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(harness::bus_factor("allgather", 4), 0.75);
  EXPECT_DOUBLE_EQ(harness::bus_factor("reducescatter", 4), 0.75);
  EXPECT_DOUBLE_EQ(harness::bus_factor("broadcast", 4), 1.0);
  EXPECT_DOUBLE_EQ(harness::bus_factor("sendrecv", 4), 1.0);
}

nlohmann::json measurement() {
  // 4 ranks; all-reduce of 1 MB takes 2 ms at p50, 3 ms at p90 (times 1,2,2,3 -> p50 2,
  // p90 2.7); bus factor 1.5.
  return {
      {"world_size", 4},
      {"entries", {{{"op", "allreduce"}, {"bytes", 1000000}, {"times_ms", {1.0, 2.0, 2.0, 3.0}}}}}};
}

TEST(CommProfile, RowsHaveAlgorithmAndBusBandwidth) {
  const auto rows = harness::comm_rows(measurement());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].samples, 4u);
  EXPECT_DOUBLE_EQ(rows[0].p50_ms, 2.0);
  EXPECT_NEAR(rows[0].p90_ms, 2.7, 1e-12);
  EXPECT_DOUBLE_EQ(rows[0].mean_ms, 2.0);
  EXPECT_NEAR(rows[0].algbw_gbps, 0.5, 1e-12);   // 1e6 B / 2e-3 s = 0.5 GB/s
  EXPECT_NEAR(rows[0].busbw_gbps, 0.75, 1e-12);  // x 2(4-1)/4
  const std::string table = harness::render_comm_table(rows, 4, "gloo");
  EXPECT_NE(table.find("allreduce"), std::string::npos);
  EXPECT_NE(table.find("0.500"), std::string::npos) << table;
  EXPECT_NE(table.find("0.750"), std::string::npos) << table;
}

TEST(CommProfile, CpuCoresAreProcessCpuTimeOverWallTime) {
  // Two sizes: 4 iterations of 10 ms using 6 ms of CPU each, 2 of 30 ms using 12 ms each.
  const nlohmann::json raw = {{"world_size", 2},
                              {"entries",
                               {{{"op", "allreduce"},
                                 {"bytes", 1000},
                                 {"times_ms", {10.0, 10.0, 10.0, 10.0}},
                                 {"cpu_ms", {6.0, 6.0, 6.0, 6.0}}},
                                {{"op", "allreduce"},
                                 {"bytes", 100000},
                                 {"times_ms", {30.0, 30.0}},
                                 {"cpu_ms", {12.0, 12.0}}},
                                {{"op", "sendrecv"}, {"bytes", 1000}, {"times_ms", {1.0, 1.0}}}}}};
  const auto rows = harness::comm_rows(raw);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NEAR(rows[0].cpu_cores, 0.6, 1e-12);
  EXPECT_NEAR(rows[1].cpu_cores, 0.4, 1e-12);
  EXPECT_EQ(rows[2].cpu_cores, 0.0);  // an older measurement without CPU times
  // The fit weighs rows by their time: (24 + 24) / (40 + 60) ms = 0.48 cores.
  EXPECT_NEAR(harness::fit_comm_model(rows, "allreduce", 2).cpu_cores, 0.48, 1e-12);
}

TEST(CommProfile, FitRecoversLatencyAndBandwidth) {
  // time = 50 us + bytes / 2 GB/s exactly, for send/recv (factor 1).
  std::vector<harness::CommRow> rows;
  for (int64_t bytes : {1000, 100000, 10000000}) {
    harness::CommRow row;
    row.op = "sendrecv";
    row.bytes = bytes;
    row.p50_ms = (50e-6 + bytes / 2e9) * 1e3;
    rows.push_back(row);
  }
  const auto fit = harness::fit_comm_model(rows, "sendrecv", 2);
  EXPECT_NEAR(fit.latency_us, 50.0, 1e-6);
  EXPECT_NEAR(fit.bus_bandwidth, 2e9, 1e-3);
  EXPECT_NEAR(fit.r_squared, 1.0, 1e-12);
  // Too few points: no fit.
  EXPECT_EQ(harness::fit_comm_model(rows, "allreduce", 2).bus_bandwidth, 0.0);
}

TEST(CommProfile, AFitOnTheMeanTakesEachSizesMeanTime) {
  // p50 = 50 us + bytes / 2 GB/s, mean = 200 us + bytes / 1 GB/s (a long tail at every size),
  // written to comm.json and read back; a row with no mean (an older file) keeps its p50.
  nlohmann::json comm = {{"rows", nlohmann::json::array()}};
  for (int64_t bytes : {1000, 100000, 10000000}) {
    comm["rows"].push_back({{"op", "sendrecv"},
                            {"bytes", bytes},
                            {"p50_ms", (50e-6 + bytes / 2e9) * 1e3},
                            {"mean_ms", (200e-6 + bytes / 1e9) * 1e3}});
  }
  comm["rows"].push_back("not a row");
  const std::vector<harness::CommRow> rows = harness::comm_rows_of(comm);
  ASSERT_EQ(rows.size(), 3u);
  const auto median = harness::fit_comm_model(rows, "sendrecv", 2);
  EXPECT_NEAR(median.latency_us, 50.0, 1e-6);
  EXPECT_NEAR(median.bus_bandwidth, 2e9, 1e-3);
  const auto mean = harness::fit_comm_model(rows, "sendrecv", 2, harness::CommTime::kMean);
  EXPECT_NEAR(mean.latency_us, 200.0, 1e-6);
  EXPECT_NEAR(mean.bus_bandwidth, 1e9, 1e-3);
  std::vector<harness::CommRow> older = rows;
  for (auto& row : older) row.mean_ms = 0;
  EXPECT_NEAR(harness::fit_comm_model(older, "sendrecv", 2, harness::CommTime::kMean).latency_us,
              50.0, 1e-6);
}

TEST(CommProfile, PricedFitsTakeTheCollectivesMeansAndKeepPointToPointAndOlderFiles) {
  // 2 ranks, all-reduce bus factor 1: p50 = 50 us + bytes / 2 GB/s, mean = 200 us + bytes / 1
  // GB/s; send/recv rows with the same times. The all-reduce is refitted on its means (its CPU
  // share kept), send/recv keeps its fit, and without means every fit stays as written.
  nlohmann::json comm = {
      {"world_size", 2},
      {"fits",
       {{{"op", "allreduce"},
         {"latency_us", 50.0},
         {"bus_bandwidth_bytes_per_s", 2e9},
         {"cpu_cores_per_rank", 0.7}},
        {{"op", "sendrecv"}, {"latency_us", 50.0}, {"bus_bandwidth_bytes_per_s", 2e9}}}},
      {"rows", nlohmann::json::array()}};
  for (const char* op : {"allreduce", "sendrecv"}) {
    for (int64_t bytes : {1000, 100000, 10000000}) {
      comm["rows"].push_back({{"op", op},
                              {"bytes", bytes},
                              {"p50_ms", (50e-6 + bytes / 2e9) * 1e3},
                              {"mean_ms", (200e-6 + bytes / 1e9) * 1e3}});
    }
  }
  const std::vector<harness::CommFit> priced = harness::priced_fits(comm);
  ASSERT_EQ(priced.size(), 2u);
  EXPECT_NEAR(priced[0].latency_us, 200.0, 1e-6);
  EXPECT_NEAR(priced[0].bus_bandwidth, 1e9, 1e-3);
  EXPECT_DOUBLE_EQ(priced[0].cpu_cores, 0.7);
  EXPECT_DOUBLE_EQ(priced[1].latency_us, 50.0);
  EXPECT_DOUBLE_EQ(priced[1].bus_bandwidth, 2e9);
  for (auto& row : comm["rows"]) row.erase("mean_ms");
  EXPECT_DOUBLE_EQ(harness::priced_fits(comm)[0].latency_us, 50.0);
}

TEST(CommProfile, AFitWithoutAPositiveBandwidthFallsBackToTheLargestSize) {
  // Noisy: the larger size was faster, so the line slopes down.
  const nlohmann::json raw = {{"world_size", 2},
                              {"entries",
                               {{{"op", "sendrecv"}, {"bytes", 1000000}, {"times_ms", {2.0}}},
                                {{"op", "sendrecv"}, {"bytes", 4000000}, {"times_ms", {1.6}}}}}};
  const auto rows = harness::comm_rows(raw);
  EXPECT_LE(harness::fit_comm_model(rows, "sendrecv", 2).bus_bandwidth, 0.0);
  const auto fit = harness::fit_or_largest(rows, "sendrecv", 2);
  EXPECT_NEAR(fit.bus_bandwidth, 4000000 / 1.6e-3, 1e-3);  // 2.5 GB/s
  EXPECT_EQ(fit.latency_us, 0.0);
}

TEST(CommProfile, FitsRoundTripThroughCommJsonAndSkipWhatNamesNoOp) {
  const harness::CommFit fit{"allgather", -12.5, 3e9, 0.98, 1.5};
  const nlohmann::json comm = {
      {"fits", {harness::to_json(fit), 7, {{"latency_us", 1.0}}, {{"op", ""}}}}};
  EXPECT_EQ(comm["fits"][0]["bus_bandwidth_bytes_per_s"], 3e9);
  const auto fits = harness::comm_fits(comm);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].op, "allgather");
  EXPECT_DOUBLE_EQ(fits[0].latency_us, -12.5);  // as written: readers decide
  EXPECT_DOUBLE_EQ(fits[0].bus_bandwidth, 3e9);
  EXPECT_DOUBLE_EQ(fits[0].r_squared, 0.98);
  EXPECT_DOUBLE_EQ(fits[0].cpu_cores, 1.5);
  EXPECT_TRUE(harness::comm_fits(nlohmann::json{{"fits", "none"}}).empty());
}

TEST(CommProfile, TopologyFileIsReadByThePlanner) {
  harness_test::TempDir dir;
  const std::vector<harness::CommFit> fits = {{"sendrecv", 40, 3e9, 1},
                                              {"allreduce", 90, 1.5e9, 1}};
  const auto path =
      dir.write("topology.yaml",
                harness::topology_yaml(harness::loopback_topology(fits, 2, 8e9, "cpu-test")));
  const auto topology = harness::planner::load_topology(path.string());
  EXPECT_EQ(topology.name, "cpu-test");
  EXPECT_DOUBLE_EQ(topology.gpu_memory_bytes, 8e9);
  EXPECT_DOUBLE_EQ(topology.intra_machine_bandwidth, 3e9);
  EXPECT_DOUBLE_EQ(topology.inter_machine_collective_bandwidth, 1.5e9);
  // One machine's all-reduce is the in-machine collective too.
  EXPECT_DOUBLE_EQ(topology.intra_machine_collective_bandwidth, 1.5e9);
  EXPECT_EQ(topology.gpus_per_machine, std::vector<int>{2});
}

TEST(CommProfile, EmulatedTopologyTakesTheLinkBetweenMachinesAndTheLoopbackWithin) {
  // Measured on 2 machines of 2 ranks: send/recv 12.5 MB/s (100 Mbit/s) between machines,
  // all-reduce bus 12 MB/s; inside machine 0, send/recv 3 GB/s.
  harness::MeasuredLink link;
  link.p2p_bytes_per_s = 12.5e6;
  link.allreduce_bus_bytes_per_s = 12e6;
  const std::vector<harness::CommFit> intra = {{"sendrecv", 40, 3e9, 1}};
  harness_test::TempDir dir;
  const auto path = dir.write("topology.yaml", harness::topology_yaml(harness::emulated_topology(
                                                   link, intra, 2, 2, 8e9, "emulated")));
  const auto topology = harness::planner::load_topology(path.string());
  EXPECT_EQ(topology.name, "emulated");
  EXPECT_DOUBLE_EQ(topology.intra_machine_bandwidth, 3e9);
  EXPECT_DOUBLE_EQ(topology.inter_machine_p2p_bandwidth, 12.5e6);
  EXPECT_DOUBLE_EQ(topology.inter_machine_collective_bandwidth, 12e6);
  EXPECT_EQ(topology.gpus_per_machine, (std::vector<int>{2, 2}));
  EXPECT_EQ(topology.intra_machine_collective_bandwidth, 0.0);  // not measured: not written
  // The ranks of machine 0 all-reduced too (bus 0.9 GB/s): the topology carries it.
  const std::vector<harness::CommFit> intra_both = {{"sendrecv", 40, 3e9, 1},
                                                    {"allreduce", 300, 0.9e9, 1}};
  const auto both = dir.write("both.yaml", harness::topology_yaml(harness::emulated_topology(
                                               link, intra_both, 2, 2, 8e9, "emulated")));
  const auto measured = harness::planner::load_topology(both.string());
  EXPECT_DOUBLE_EQ(measured.intra_machine_bandwidth, 3e9);
  EXPECT_DOUBLE_EQ(measured.intra_machine_collective_bandwidth, 0.9e9);
  // One rank per machine: no transfer inside a machine; the link's value stands in.
  const auto single = harness::emulated_topology(link, {}, 2, 1, 8e9, "emulated");
  EXPECT_DOUBLE_EQ(single.intra_machine, 12.5e6);
  EXPECT_EQ(single.machines, (std::vector<int>{1, 1}));
  // Several ranks per machine need their own measurement.
  EXPECT_THROW(harness::emulated_topology(link, {}, 2, 2, 8e9, "x"), harness::InputError);
}

TEST(CommProfile, MeasuredLinkLatencyIsTheSmallestPingPongsOneWayTime) {
  const nlohmann::json raw = {
      {"world_size", 2},
      {"entries",
       {{{"op", "pingpong"}, {"bytes", 1 << 20}, {"times_ms", {90.0, 91.0, 92.0}}},
        {{"op", "pingpong"}, {"bytes", 8}, {"times_ms", {1.2, 1.0, 1.1}}},
        {{"op", "sendrecv"}, {"bytes", 1 << 20}, {"times_ms", {84.0}}},
        {{"op", "sendrecv"}, {"bytes", 4 << 20}, {"times_ms", {336.0}}}}}};
  const auto rows = harness::comm_rows(raw);
  // Ping-pong's bus factor is 1: its time is already one way.
  EXPECT_NEAR(rows[0].busbw_gbps, (1 << 20) / 91e-3 / 1e9, 1e-12);
  const std::vector<harness::CommFit> fits = {harness::fit_comm_model(rows, "sendrecv", 2)};
  const harness::MeasuredLink link = harness::measured_link(fits, rows);
  ASSERT_TRUE(link.one_way_latency_us);
  EXPECT_NEAR(*link.one_way_latency_us, 1100.0, 1e-9);  // p50 of 1.0, 1.1, 1.2 ms
  // 3 MiB more in 252 ms more: 12.483 MB/s.
  EXPECT_NEAR(link.p2p_bytes_per_s, 3.0 * (1 << 20) / 0.252, 1e-3);
  EXPECT_EQ(link.allreduce_bus_bytes_per_s, 0.0);
  const auto json = harness::to_json(link);
  EXPECT_NEAR(json.at("p2p_bits_per_s").get<double>(), 8 * 3.0 * (1 << 20) / 0.252, 1e-2);
}

// The burst's send calls (comm-raw.json `send_call_ms`, the initiator's calls alone): each
// size's p50, by size ascending whatever order the entries came in, for the simulator's
// inter_send_call_us; rows without them (an older comm-worker) add nothing.
TEST(CommProfile, MeasuredLinkCarriesTheBurstsSendCallsBySize) {
  const nlohmann::json raw = {
      {"world_size", 2},
      {"entries",
       {{{"op", "burst"},
         {"bytes", 65536},
         {"times_ms", {1.0, 1.1, 1.2}},
         {"send_call_ms", {0.40, 0.38, 0.36}}},
        {{"op", "burst"},
         {"bytes", 8},
         {"times_ms", {0.08, 0.09, 0.10}},
         {"send_call_ms", {0.07, 0.09, 0.08}}},
        {{"op", "burst"}, {"bytes", 16384}, {"times_ms", {0.10, 0.10, 0.10}}},
        {{"op", "pingpong"},
         {"bytes", 8},
         {"times_ms", {0.03, 0.03, 0.03}},
         {"send_call_ms", {0.01, 0.01, 0.01}}}}}};
  const auto rows = harness::comm_rows(raw);
  ASSERT_TRUE(rows[0].send_call_p50_ms);
  EXPECT_NEAR(*rows[0].send_call_p50_ms, 0.38, 1e-12);
  EXPECT_FALSE(rows[2].send_call_p50_ms);
  const harness::MeasuredLink link = harness::measured_link({}, rows);
  ASSERT_EQ(link.send_call_us.size(), 2u);  // the ping-pong's calls are not the burst's
  EXPECT_EQ(link.send_call_us[0].first, 8);
  EXPECT_NEAR(link.send_call_us[0].second, 80.0, 1e-9);
  EXPECT_EQ(link.send_call_us[1].first, 65536);
  EXPECT_NEAR(link.send_call_us[1].second, 380.0, 1e-9);
  EXPECT_EQ(harness::to_json(link).at("send_call_us"),
            nlohmann::json::parse("[[8, 80.0], [65536, 380.0]]"));
}

// What a message past the bucket took beyond the burst model of it: a link whose burst leaves
// after 100 us at 1 GB/s and whose rate is 10 MB/s, a bucket of 10,000 B (10 us of burst).
// 20,000 B in 1.25 ms against 100 + 10 + 1,000 us: +140 us; 80,000 B in 7.2 ms against
// 100 + 10 + 7,000 us: +90 us; their median +115 us. The 8 B row is below the bucket and left
// out; without the burst's latency or a p2p rate nothing is claimed.
TEST(CommProfile, PastTheBucketIsWhatLongerMessagesTookBeyondTheBurstModel) {
  const nlohmann::json raw = {
      {"world_size", 2},
      {"entries",
       {{{"op", "burst"}, {"bytes", 8}, {"times_ms", {0.5, 0.5, 0.5}}},
        {{"op", "burst"}, {"bytes", 20000}, {"times_ms", {1.2, 1.25, 1.3}}},
        {{"op", "burst"}, {"bytes", 80000}, {"times_ms", {7.2, 7.1, 7.3}}}}}};
  const auto rows = harness::comm_rows(raw);
  harness::MeasuredLink link;
  link.burst_latency_us = 100.0;
  link.burst_bytes_per_s = 1e9;
  link.p2p_bytes_per_s = 1e7;
  const auto past = harness::past_bucket_latency_us(link, rows, 10000);
  ASSERT_TRUE(past);
  EXPECT_NEAR(*past, 115.0, 1e-6);
  link.past_bucket_latency_us = past;
  EXPECT_NEAR(harness::to_json(link).at("past_bucket_latency_us").get<double>(), 115.0, 1e-6);
  // A burst path not resolved (0): the bucket's bytes cost nothing beyond the latency.
  link.burst_bytes_per_s = 0;
  EXPECT_NEAR(*harness::past_bucket_latency_us(link, rows, 10000), 125.0, 1e-6);
  EXPECT_FALSE(harness::past_bucket_latency_us(link, rows, 1e6));  // no message past it
  link.p2p_bytes_per_s = 0;
  EXPECT_FALSE(harness::past_bucket_latency_us(link, rows, 10000));
  link.p2p_bytes_per_s = 1e7;
  link.burst_latency_us.reset();
  EXPECT_FALSE(harness::past_bucket_latency_us(link, rows, 10000));
  EXPECT_TRUE(harness::to_json(harness::MeasuredLink{}).at("past_bucket_latency_us").is_null());
}

// The `burst` ping-pong (a message after its link idled): its smallest message's one-way time
// is the burst latency, and its fit's bandwidth the host's path: 8 B in 0.09 ms, 16 KiB in
// 0.10 ms, 32 KiB in 0.11 ms (p50s): 32,760 B more in 0.02 ms, 1.638 GB/s (the least squares
// through the three, 33 B/s off). Not measured: unset and null; sizes whose times fall with
// size, or a path no faster than the link's ping-pong: no path resolved (0), the latency still
// given.
TEST(CommProfile, MeasuredLinkCarriesTheBurstAfterAnIdleLink) {
  const nlohmann::json raw = {
      {"world_size", 2},
      {"entries",
       {{{"op", "burst"}, {"bytes", 8}, {"times_ms", {0.08, 0.09, 0.10}}},
        {{"op", "burst"}, {"bytes", 16384}, {"times_ms", {0.10, 0.10, 0.10}}},
        {{"op", "burst"}, {"bytes", 32768}, {"times_ms", {0.11, 0.12, 0.11}}},
        {{"op", "pingpong"}, {"bytes", 8}, {"times_ms", {0.03, 0.03, 0.03}}}}}};
  auto rows = harness::comm_rows(raw);
  harness::MeasuredLink link =
      harness::measured_link({harness::fit_comm_model(rows, "burst", 2)}, rows);
  ASSERT_TRUE(link.burst_latency_us);
  EXPECT_NEAR(*link.burst_latency_us, 90.0, 1e-9);
  EXPECT_NEAR(*link.one_way_latency_us, 30.0, 1e-9);
  EXPECT_NEAR(link.burst_bytes_per_s, 1.638e9, 100.0);
  auto json = harness::to_json(link);
  EXPECT_NEAR(json.at("burst_latency_us").get<double>(), 90.0, 1e-9);
  EXPECT_NEAR(json.at("burst_bits_per_s").get<double>(), 8 * 1.638e9, 800.0);
  // The largest faster than the middle one: a falling fit, no path.
  nlohmann::json falling = raw;
  falling["entries"][2]["times_ms"] = {0.08, 0.08, 0.08};
  rows = harness::comm_rows(falling);
  link = harness::measured_link({harness::fit_comm_model(rows, "burst", 2)}, rows);
  ASSERT_TRUE(link.burst_latency_us);
  EXPECT_EQ(link.burst_bytes_per_s, 0.0);
  // A path no faster than the link's own one-way rate: noise, no path. The ping-pong's 8 B in
  // 0.03 ms and 1 MiB in 0.03 + 1,048,568 B / 2 GB/s: a p2p fit of 2 GB/s, above the burst's
  // 1.638 GB/s; at 1 GB/s (1.0786 ms) below it, and the burst's fit stands.
  const auto with_pingpong_of_1mib_in = [&raw](double ms) {
    nlohmann::json measured = raw;
    measured["entries"].push_back(
        {{"op", "pingpong"}, {"bytes", 1 << 20}, {"times_ms", {ms, ms, ms}}});
    const auto rows = harness::comm_rows(measured);
    return harness::measured_link(
        {harness::fit_comm_model(rows, "pingpong", 2), harness::fit_comm_model(rows, "burst", 2)},
        rows);
  };
  link = with_pingpong_of_1mib_in(0.554284);
  EXPECT_NEAR(link.p2p_bytes_per_s, 2e9, 1e3);
  ASSERT_TRUE(link.burst_latency_us);
  EXPECT_EQ(link.burst_bytes_per_s, 0.0);
  link = with_pingpong_of_1mib_in(1.078568);
  EXPECT_NEAR(link.p2p_bytes_per_s, 1e9, 1e3);
  EXPECT_NEAR(link.burst_bytes_per_s, 1.638e9, 100.0);
  // No burst measured (an unshaped link): nothing claimed.
  nlohmann::json none = raw;
  none["entries"] = nlohmann::json::array({raw["entries"][3]});
  rows = harness::comm_rows(none);
  link = harness::measured_link({}, rows);
  EXPECT_FALSE(link.burst_latency_us);
  json = harness::to_json(link);
  EXPECT_TRUE(json.at("burst_latency_us").is_null());
  EXPECT_TRUE(json.at("send_call_us").is_null());
  EXPECT_EQ(json.at("burst_bits_per_s").get<double>(), 0.0);
}

TEST(CommProfile, MeasuredLinkCarriesTheCoresTheAllReduceKeptBusy) {
  // 150 ms of CPU in 300 ms and 300 ms in 1200 ms: 450 / 1500 = 0.3 of a core per rank.
  const nlohmann::json raw = {{"world_size", 2},
                              {"entries",
                               {{{"op", "allreduce"},
                                 {"bytes", 1 << 20},
                                 {"times_ms", {100.0, 100.0, 100.0}},
                                 {"cpu_ms", {40.0, 50.0, 60.0}}},
                                {{"op", "allreduce"},
                                 {"bytes", 4 << 20},
                                 {"times_ms", {400.0, 400.0, 400.0}},
                                 {"cpu_ms", {100.0, 100.0, 100.0}}}}}};
  const auto rows = harness::comm_rows(raw);
  const harness::MeasuredLink link =
      harness::measured_link({harness::fit_comm_model(rows, "allreduce", 2)}, rows);
  ASSERT_TRUE(link.allreduce_cpu_cores_per_rank);
  EXPECT_NEAR(*link.allreduce_cpu_cores_per_rank, 0.3, 1e-12);
  EXPECT_NEAR(harness::to_json(link).at("allreduce_cpu_cores_per_rank").get<double>(), 0.3, 1e-12);
  // The same fit as one machine's own all-reduce: the in-machine share, in env.json's entry.
  harness::EmulatedClusterShape shape;
  shape.machines = 2;
  shape.ranks_per_machine = 2;
  EXPECT_FALSE(link.intra_allreduce_cpu_cores_per_rank);
  EXPECT_TRUE(harness::emulated_link_json(
                  shape, link)["intra_machine_measured"]["allreduce_cpu_cores_per_rank"]
                  .is_null());
  const harness::MeasuredLink both = harness::measured_link(
      {harness::fit_comm_model(rows, "allreduce", 2)}, rows, harness::intra_machine_fits(rows, 2));
  ASSERT_TRUE(both.intra_allreduce_cpu_cores_per_rank);
  EXPECT_NEAR(*both.intra_allreduce_cpu_cores_per_rank, 0.3, 1e-12);
  EXPECT_NEAR(harness::emulated_link_json(
                  shape, both)["intra_machine_measured"]["allreduce_cpu_cores_per_rank"]
                  .get<double>(),
              0.3, 1e-12);
  // Without CPU times (an older measurement): not claimed.
  nlohmann::json wall_only = raw;
  for (auto& entry : wall_only["entries"]) entry.erase("cpu_ms");
  const auto wall_rows = harness::comm_rows(wall_only);
  const harness::MeasuredLink unknown =
      harness::measured_link({harness::fit_comm_model(wall_rows, "allreduce", 2)}, wall_rows);
  EXPECT_FALSE(unknown.allreduce_cpu_cores_per_rank);
  EXPECT_TRUE(harness::to_json(unknown).at("allreduce_cpu_cores_per_rank").is_null());
}

TEST(PipeDreamGraph, RoundTripsThroughThePlannersImport) {
  harness_test::TempDir dir;
  const std::vector<harness::GraphLayer> layers = {
      {"fc1", "Linear", 1.5, 3.0, 4096, 9216},
      {"relu", "ReLU", 0.25, 0.5, 4096, 0},
      {"fc2", "Linear", 0.75, 1.25, 48, 3084},
  };
  const auto path = dir.write("graph.txt", harness::pipedream_graph(layers, 128));
  const auto profile = harness::planner::import_profile(path.string());
  // The Input node is dropped; a chain of 3 layers has 3 states.
  EXPECT_EQ(profile.num_states(), 3);
  EXPECT_NEAR(profile.compute_s.total(), (1.5 + 3.0 + 0.25 + 0.5 + 0.75 + 1.25) / 1000, 1e-12);
  EXPECT_DOUBLE_EQ(profile.parameter_bytes.total(), 9216 + 3084);
  EXPECT_DOUBLE_EQ(profile.activation_bytes.total(), 4096 + 4096 + 48);
  EXPECT_EQ(profile.graph.nodes[0].description, "Linear(fc1)");
}

}  // namespace
