// The lockstep barrier of co-located profiles (`harness profile layers --co-located N`): no
// copy passes round k before every copy has reached it, and the rounds stay in step.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime/layer_profiler.h"

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

TEST(LockstepBarrier, NoCopyPassesARoundBeforeAllReachIt) {
  constexpr int kRanks = 3, kRounds = 20;
  const int port = free_port();
  std::atomic<int> arrived[kRounds] = {};
  std::atomic<int> early{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      const auto barrier = runtime::make_lockstep_barrier(port, r, kRanks, 30);
      for (int k = 0; k < kRounds; ++k) {
        // The slowest copy changes from round to round.
        if ((k + r) % kRanks == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        arrived[k].fetch_add(1);
        barrier();
        if (arrived[k].load() != kRanks) early.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(early.load(), 0);
  for (int k = 0; k < kRounds; ++k) EXPECT_EQ(arrived[k].load(), kRanks) << k;
}

TEST(LockstepBarrier, AMissingCopyTimesOut) {
  const int port = free_port();
  std::thread other([port] {
    const auto barrier = runtime::make_lockstep_barrier(port, 1, 2, 2);
    barrier();  // round 0 with rank 0; rank 1 then never comes to round 1
  });
  const auto barrier = runtime::make_lockstep_barrier(port, 0, 2, 2);
  barrier();
  other.join();
  EXPECT_ANY_THROW(barrier());
}

}  // namespace
