// The lockstep barrier of co-located profiles (`harness profile layers --co-located N`): no
// copy passes round k before every copy has reached it, and the rounds stay in step. The
// meeting's gather hands every copy's result to copy 0 (`harness-rank spmd-times`).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/ports.h"
#include "runtime/profile/layer_profiler.h"

namespace {

TEST(LockstepBarrier, NoCopyPassesARoundBeforeAllReachIt) {
  constexpr int kRanks = 3, kRounds = 20;
  const int port = harness::pick_free_port();
  std::atomic<int> arrived[kRounds] = {};
  std::atomic<int> early{0};
  // Copy 0 hosts the store: it must not tear it down while another copy still waits on the
  // last round's gate (that copy's read then fails with a broken pipe).
  std::barrier all_done(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      const auto barrier = runtime::make_lockstep_barrier({port}, r, kRanks, 30);
      for (int k = 0; k < kRounds; ++k) {
        // The slowest copy changes from round to round.
        if ((k + r) % kRanks == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        arrived[k].fetch_add(1);
        barrier();
        if (arrived[k].load() != kRanks) early.fetch_add(1);
      }
      all_done.arrive_and_wait();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(early.load(), 0);
  for (int k = 0; k < kRounds; ++k) EXPECT_EQ(arrived[k].load(), kRanks) << k;
}

TEST(LockstepBarrier, AMissingCopyTimesOut) {
  const int port = harness::pick_free_port();
  std::thread other([port] {
    const auto barrier = runtime::make_lockstep_barrier({port}, 1, 2, 2);
    barrier();  // round 0 with rank 0; rank 1 then never comes to round 1
  });
  const auto barrier = runtime::make_lockstep_barrier({port}, 0, 2, 2);
  barrier();
  other.join();
  EXPECT_ANY_THROW(barrier());
}

TEST(LockstepMeeting, CopyZeroGathersEveryCopysResultInRankOrder) {
  constexpr int kRanks = 3;
  const int port = harness::pick_free_port();
  std::vector<std::vector<std::string>> gathered(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      const auto meeting = runtime::make_lockstep_meeting({port}, r, kRanks, 30);
      meeting.barrier();
      // The last rank posts last: copy 0 must wait for it.
      if (r == kRanks - 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      gathered[r] = meeting.gather("result of " + std::to_string(r));
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(gathered[0], (std::vector<std::string>{"result of 0", "result of 1", "result of 2"}));
  EXPECT_TRUE(gathered[1].empty());
  EXPECT_TRUE(gathered[2].empty());
}

}  // namespace
