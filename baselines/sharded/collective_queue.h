// One thread that runs a rank's collectives one after another, in the order they were queued.
// Sharded data parallelism queues them from the training thread (forward) and from autograd's
// hooks (backward); every rank queues the same collectives in the same order, which Gloo and
// NCCL need, and the thread lets each run while computation goes on (a prefetched all-gather, a
// reduce-scatter behind backward).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace baselines {

class CollectiveQueue {
 public:
  CollectiveQueue();
  // Waits for the queued jobs, then stops the thread.
  ~CollectiveQueue();
  CollectiveQueue(const CollectiveQueue&) = delete;
  CollectiveQueue& operator=(const CollectiveQueue&) = delete;

  // Queues `job`; the future is ready when it has run and rethrows what it threw.
  std::shared_future<void> push(std::function<void()> job);

 private:
  void serve();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::packaged_task<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace baselines
