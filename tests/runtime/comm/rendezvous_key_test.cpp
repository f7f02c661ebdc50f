// Two runs that picked the same free port at once (the harness picks it before rank 0 listens
// on it): the second run's rank 0 fails to bind and runs again, but its other ranks may
// already have joined the first run's TCP store. Under each run's own key (Rendezvous::key)
// they read and write only their own entries: a stray client's value never reaches the run,
// and the run's real Gloo all-reduce completes with its own ranks' sum.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "common/ports.h"
#include "runtime/comm/communicator.h"

namespace {

runtime::Rendezvous on_port(int port, std::string key) {
  runtime::Rendezvous rendezvous;
  rendezvous.port = port;
  rendezvous.key = std::move(key);
  rendezvous.timeout = std::chrono::seconds(20);
  return rendezvous;
}

std::string text_of(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

TEST(RendezvousKey, AStrayClientOfAnotherRunNeverOverwritesThisRunsEntries) {
  const int port = harness::pick_free_port();
  const std::string mine = harness::new_rendezvous_key();
  const std::string stray = harness::new_rendezvous_key();
  ASSERT_NE(mine, stray);
  ASSERT_EQ(mine.rfind("run-", 0), 0u);
  EXPECT_EQ(mine.size(), 4u + 16u);
  // Rank 0 serves; its constructor waits for the run's second rank.
  auto server = std::async(std::launch::async,
                           [&] { return runtime::connect_store(on_port(port, mine), 0, 2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto own_rank = runtime::connect_store(on_port(port, mine), 1, 2);
  auto rank0 = server.get();
  auto stray_rank = runtime::connect_store(on_port(port, stray), 1, 2);
  // This run's rank 1 writes first, the stray last: without keys the stray's value would win.
  own_rank->set("rank_1", std::vector<uint8_t>{'o', 'w', 'n'});
  stray_rank->set("rank_1", std::vector<uint8_t>{'s', 't', 'r', 'a', 'y'});
  EXPECT_EQ(text_of(rank0->get("rank_1")), "own");
  EXPECT_EQ(text_of(stray_rank->get("rank_1")), "stray");
  EXPECT_EQ(rank0->add("joined", 1), 1);  // counters are per run too
  EXPECT_EQ(stray_rank->add("joined", 1), 1);
}

TEST(RendezvousKey, GlooOfOneRunIgnoresAStrayRankThatJoinedItsStore) {
  const int port = harness::pick_free_port();
  const std::string mine = harness::new_rendezvous_key();
  const std::string stray = harness::new_rendezvous_key();
  std::promise<void> stray_published;
  const auto all_reduce = [&](int rank, std::shared_future<void> before_gloo) {
    auto store = runtime::connect_store(on_port(port, mine), rank, 2);
    before_gloo.wait();
    auto communicator = runtime::make_gloo_communicator(store, rank, 2, std::chrono::seconds(20));
    at::Tensor value = torch::full({4}, static_cast<float>(rank + 1));
    communicator->all_reduce_sum(value)->wait();
    return value;
  };
  std::promise<void> now;
  now.set_value();
  // Rank 1 of this run publishes its Gloo address; then the stray rank 1 of the other run
  // publishes its own (it waits for a rank 0 of its run that never comes, and gives up); only
  // then does rank 0 read where rank 1 is.
  auto rank0 = std::async(std::launch::async, all_reduce, 0, stray_published.get_future().share());
  auto rank1 = std::async(std::launch::async, all_reduce, 1, now.get_future().share());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  runtime::Rendezvous rendezvous = on_port(port, stray);
  rendezvous.timeout = std::chrono::seconds(2);
  auto stray_store = runtime::connect_store(rendezvous, 1, 2);
  auto lost = std::async(std::launch::async, [&] {
    try {
      runtime::make_gloo_communicator(stray_store, 1, 2, std::chrono::seconds(2));
    } catch (const std::exception&) {
      return true;  // gave up: its run's rank 0 never came
    }
    return false;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stray_published.set_value();
  at::Tensor sum0 = rank0.get();
  at::Tensor sum1 = rank1.get();
  EXPECT_TRUE(torch::equal(sum0, torch::full({4}, 3.0f))) << sum0;
  EXPECT_TRUE(torch::equal(sum1, torch::full({4}, 3.0f))) << sum1;
  EXPECT_TRUE(lost.get());
}

}  // namespace
