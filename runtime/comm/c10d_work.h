// A c10d operation behind CommWork: what both communicators (Gloo, NCCL) return for the
// collectives c10d runs itself. wait() is c10d's: on the CPU it blocks until the result is in
// place; for NCCL it orders the rank's current stream after the collective.
#pragma once

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>

#include "runtime/comm/communicator.h"

namespace runtime {

class C10dWork : public CommWork {
 public:
  explicit C10dWork(c10::intrusive_ptr<c10d::Work> work) : work_(std::move(work)) {}
  void wait() override { work_->wait(); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
};

inline std::unique_ptr<CommWork> c10d_work(c10::intrusive_ptr<c10d::Work> work) {
  return std::make_unique<C10dWork>(std::move(work));
}

}  // namespace runtime
