#include "baselines/sharded/collective_queue.h"

namespace baselines {

CollectiveQueue::CollectiveQueue() : thread_([this] { serve(); }) {}

CollectiveQueue::~CollectiveQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

std::shared_future<void> CollectiveQueue::push(std::function<void()> job) {
  std::packaged_task<void()> task(std::move(job));
  std::shared_future<void> done = task.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(task));
  }
  wake_.notify_one();
  return done;
}

void CollectiveQueue::serve() {
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and every queued job has run
      task = std::move(jobs_.front());
      jobs_.pop_front();
    }
    task();  // an exception lands in the task's future
  }
}

}  // namespace baselines
