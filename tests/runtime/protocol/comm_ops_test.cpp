// How many round trips a ping-pong times at each size (runtime/protocol/comm_ops.h).
#include "runtime/protocol/comm_ops.h"

#include <gtest/gtest.h>

namespace runtime {
namespace {

TEST(PingPongRoundTrips, FourUpToAMebibyteThenAsManyAsCarryFourMebibytes) {
  // The smallest message (latency), the probe's sizes on a 100 Mbit/s link and 1 MiB: four.
  for (int64_t bytes : {int64_t{8}, int64_t{64} << 10, int64_t{1} << 20}) {
    EXPECT_EQ(pingpong_round_trips(bytes, /*burst=*/false), 4) << bytes;
  }
  // 4 MiB each way: 2 MiB twice, 1.5 MiB twice (2.67 rounded down), 3 MiB once.
  EXPECT_EQ(pingpong_round_trips(2 << 20, false), 2);
  EXPECT_EQ(pingpong_round_trips(3 << 19, false), 2);
  EXPECT_EQ(pingpong_round_trips(3 << 20, false), 1);
  // A probe at 2 Gbit/s: 8 and 32 MiB once each; never none.
  EXPECT_EQ(pingpong_round_trips(8 << 20, false), 1);
  EXPECT_EQ(pingpong_round_trips(int64_t{1} << 34, false), 1);
}

TEST(PingPongRoundTrips, ABurstMakesFourAtEverySize) {
  for (int64_t bytes : {int64_t{8}, int64_t{2} << 20, int64_t{32} << 20}) {
    EXPECT_EQ(pingpong_round_trips(bytes, /*burst=*/true), 4) << bytes;
  }
}

}  // namespace
}  // namespace runtime
