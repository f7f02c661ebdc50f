// A fixed set of worker threads for planning jobs. Results never depend on the thread count:
// callers write each job's result into its own slot.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace harness::planner {

class ThreadPool {
 public:
  // threads <= 1 runs everything on the calling thread.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Runs job(0..count-1), each index exactly once, and waits for all of them. The first
  // exception thrown by a job is rethrown here.
  void parallel_for(int count, const std::function<void(int)>& job);

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

 private:
  void worker_loop();
  void drain(std::unique_lock<std::mutex>& lock);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_, work_done_;
  const std::function<void(int)>* job_ = nullptr;
  int next_ = 0, count_ = 0, running_ = 0;
  std::size_t generation_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
};

}  // namespace harness::planner
