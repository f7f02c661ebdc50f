#include "planner/search/thread_pool.h"

namespace harness::planner {

ThreadPool::ThreadPool(int threads) {
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

// Takes indices until none are left; the caller holds the lock.
void ThreadPool::drain(std::unique_lock<std::mutex>& lock) {
  while (next_ < count_) {
    const int index = next_++;
    ++running_;
    lock.unlock();
    try {
      (*job_)(index);
    } catch (...) {
      lock.lock();
      if (!error_) error_ = std::current_exception();
      next_ = count_;  // stop handing out work
      --running_;
      continue;
    }
    lock.lock();
    --running_;
  }
  if (running_ == 0) work_done_.notify_all();
}

void ThreadPool::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::size_t seen = generation_;
  while (true) {
    work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    drain(lock);
  }
}

void ThreadPool::parallel_for(int count, const std::function<void(int)>& job) {
  std::unique_lock<std::mutex> lock(mutex_);
  job_ = &job;
  next_ = 0;
  count_ = count;
  error_ = nullptr;
  ++generation_;
  work_ready_.notify_all();
  drain(lock);
  work_done_.wait(lock, [&] { return running_ == 0 && next_ >= count_; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace harness::planner
