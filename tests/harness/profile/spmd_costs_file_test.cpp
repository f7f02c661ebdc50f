// The SPMD search's cost inputs read from a comm.json (harness/profile/spmd_costs_file.h): each
// fit as the search prices it, the closest fit standing in for a missing one (and said), a
// negative fitted latency as none, and a file without an all-reduce refused naming itself.
#include "harness/profile/spmd_costs_file.h"

#include <gtest/gtest.h>

#include "common/input_error.h"
#include "tests/test_util.h"

namespace {

using harness::spmd::Collective;

const harness::spmd::CollectiveFit& fit_of(const harness::SpmdCostInputs& inputs,
                                           Collective collective) {
  return inputs.costs.fits[static_cast<int>(collective)];
}

TEST(SpmdCostsFile, ReadsEachFitAndSaysWhatStandsInForAMissingOne) {
  const harness_test::TempDir dir;
  const auto path = dir.write("comm.json", R"({"world_size": 2, "fits": [
    {"op": "allreduce", "latency_us": 1500, "bus_bandwidth_bytes_per_s": 1e9},
    {"op": "allgather", "latency_us": -20, "bus_bandwidth_bytes_per_s": 2e9},
    {"op": "sendrecv", "latency_us": 100, "bus_bandwidth_bytes_per_s": 5e9}]})");
  const auto inputs = harness::read_spmd_costs(path.string(), 86e9);
  EXPECT_EQ(inputs.measured_ranks, 2);
  EXPECT_DOUBLE_EQ(inputs.costs.flops_per_s, 86e9);
  EXPECT_DOUBLE_EQ(fit_of(inputs, Collective::kAllReduce).latency_s, 1.5e-3);
  EXPECT_DOUBLE_EQ(fit_of(inputs, Collective::kAllReduce).bus_bytes_per_s, 1e9);
  // A negative intercept is no latency; the missing reduce-scatter and all-to-all are priced by
  // the all-gather's fit.
  EXPECT_DOUBLE_EQ(fit_of(inputs, Collective::kAllGather).latency_s, 0.0);
  for (auto missing : {Collective::kReduceScatter, Collective::kAllToAll}) {
    EXPECT_DOUBLE_EQ(fit_of(inputs, missing).bus_bytes_per_s, 2e9);
  }
  EXPECT_EQ(inputs.substitutions,
            "reduce-scatter priced by the all-gather fit, all-to-all priced by the all-gather fit");
}

// Where the rows record each size's mean, the search prices the collective by the line through
// the means (here 1 ms + bytes / 0.5 GB/s), not by the p50 fit written in `fits`.
TEST(SpmdCostsFile, PricesACollectiveAtItsRowsMeanTimes) {
  const harness_test::TempDir dir;
  const auto path = dir.write("comm.json", R"({"world_size": 2, "fits": [
    {"op": "allreduce", "latency_us": 100, "bus_bandwidth_bytes_per_s": 1e9}], "rows": [
    {"op": "allreduce", "bytes": 1000000, "p50_ms": 1.1, "mean_ms": 3.0},
    {"op": "allreduce", "bytes": 4000000, "p50_ms": 4.1, "mean_ms": 9.0}]})");
  const auto inputs = harness::read_spmd_costs(path.string(), 1e9);
  EXPECT_NEAR(fit_of(inputs, Collective::kAllReduce).latency_s, 1e-3, 1e-12);
  EXPECT_NEAR(fit_of(inputs, Collective::kAllReduce).bus_bytes_per_s, 0.5e9, 1e-3);
}

TEST(SpmdCostsFile, AnAllReduceAloneStandsInForEveryOtherCollective) {
  const harness_test::TempDir dir;
  const auto path = dir.write("comm.json", R"({"fits": [
    {"op": "allreduce", "latency_us": 10, "bus_bandwidth_bytes_per_s": 3e9},
    {"op": "alltoall", "latency_us": 10, "bus_bandwidth_bytes_per_s": 0}]})");
  const auto inputs = harness::read_spmd_costs(path.string(), 1e9);
  for (auto collective :
       {Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll}) {
    EXPECT_DOUBLE_EQ(fit_of(inputs, collective).bus_bytes_per_s, 3e9);
  }
  EXPECT_EQ(inputs.substitutions,
            "all-gather priced by the all-reduce fit, reduce-scatter priced by the all-gather "
            "fit, all-to-all priced by the all-gather fit");
}

TEST(SpmdCostsFile, RefusesAFileWithoutAnAllReduceNamingIt) {
  const harness_test::TempDir dir;
  const auto no_fits = dir.write("a.json", R"({"backend": "gloo"})");
  const auto no_all_reduce =
      dir.write("b.json", R"({"fits": [{"op": "allreduce", "bus_bandwidth_bytes_per_s": 0}]})");
  EXPECT_EQ(harness_test::thrown_message<harness::InputError>(
                [&] { harness::read_spmd_costs(no_fits.string(), 1e9); }),
            no_fits.string() + ": not a comm.json of `harness profile comm` (no 'fits')");
  EXPECT_EQ(harness_test::thrown_message<harness::InputError>(
                [&] { harness::read_spmd_costs(no_all_reduce.string(), 1e9); }),
            no_all_reduce.string() + ": no all-reduce fit with a positive bandwidth in 'fits'");
}

}  // namespace
