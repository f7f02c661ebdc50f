// Which cores a pinned rank gets: blocks counted down from the last allowed core, core 0 last,
// and a host with too few cores named in one message.
#include <gtest/gtest.h>

#include <stdexcept>

#include "runtime/protocol/cpu_pinning.h"

namespace {

using runtime::rank_cpus;

TEST(CpuPinning, RanksTakeBlocksFromTheLastCoreDown) {
  const std::vector<int> two = {0, 1};
  EXPECT_EQ(rank_cpus(0, 1, two), (std::vector<int>{1}));
  EXPECT_EQ(rank_cpus(1, 1, two), (std::vector<int>{0}));
  EXPECT_EQ(rank_cpus(0, 2, two), (std::vector<int>{0, 1}));
  // Allowed cores need not be contiguous (a cgroup's cpuset): 2 threads a rank over 6 cores.
  const std::vector<int> allowed = {0, 2, 3, 5, 6, 7};
  EXPECT_EQ(rank_cpus(0, 2, allowed), (std::vector<int>{6, 7}));
  EXPECT_EQ(rank_cpus(1, 2, allowed), (std::vector<int>{3, 5}));
  EXPECT_EQ(rank_cpus(2, 2, allowed), (std::vector<int>{0, 2}));
}

TEST(CpuPinning, TooFewCoresAreNamed) {
  try {
    rank_cpus(2, 1, {0, 1});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "run.pin_cpus: local rank 2 with 1 thread(s) a rank needs 3 cores, and this host "
                 "allows 2");
  }
  EXPECT_THROW(rank_cpus(-1, 1, {0}), std::invalid_argument);
}

// The process's own mask is read back after pinning to one of its cores (then restored).
TEST(CpuPinning, PinsThisProcess) {
  const std::vector<int> before = runtime::allowed_cpus();
  ASSERT_FALSE(before.empty());
  runtime::pin_process({before.back()});
  EXPECT_EQ(runtime::allowed_cpus(), (std::vector<int>{before.back()}));
  runtime::pin_process(before);
  EXPECT_EQ(runtime::allowed_cpus(), before);
}

}  // namespace
