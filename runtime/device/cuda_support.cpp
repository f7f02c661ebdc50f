// The CUDA interface where the LibTorch carries CUDA and NCCL (cuda_support.h says why it is one
// file): c10's CUDA device, stream and allocator calls, c10d's ProcessGroupNCCL, and c10's
// device-generic events for timing.
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/core/Event.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <vector>

#include "runtime/comm/c10d_work.h"
#include "runtime/device/cuda_support.h"

namespace runtime::cuda {
namespace {

class NcclCommunicator : public Communicator {
 public:
  explicit NcclCommunicator(c10::intrusive_ptr<c10d::ProcessGroupNCCL> group)
      : group_(std::move(group)) {}
  // As Python's destroy_process_group(): the communicators are finalised before the group goes,
  // rather than left to its destructor's last-resort abort.
  ~NcclCommunicator() override {
    try {
      group_->shutdown();
    } catch (const std::exception&) {
      // A failed shutdown at exit changes no result; the destructor still releases the group.
    }
  }

  int rank() const override { return group_->getRank(); }
  int world_size() const override { return group_->getSize(); }
  std::string backend() const override { return "nccl"; }

  std::unique_ptr<CommWork> all_reduce_sum(at::Tensor tensor) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    return c10d_work(group_->allreduce(tensors, c10d::AllreduceOptions()));
  }
  std::unique_ptr<CommWork> broadcast(at::Tensor tensor, int root) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    return c10d_work(group_->broadcast(tensors, options));
  }
  std::unique_ptr<CommWork> all_gather(at::Tensor output, at::Tensor input) override {
    return c10d_work(group_->_allgather_base(output, input, c10d::AllgatherOptions()));
  }
  void reduce_scatter_sum(at::Tensor output, at::Tensor input) override {
    group_->_reduce_scatter_base(output, input, c10d::ReduceScatterOptions())->wait();
  }
  std::unique_ptr<CommWork> all_to_all(at::Tensor output, at::Tensor input,
                                       std::vector<int64_t> output_splits,
                                       std::vector<int64_t> input_splits) override {
    return c10d_work(
        group_->alltoall_base(output, input, output_splits, input_splits, c10d::AllToAllOptions()));
  }
  std::unique_ptr<CommWork> send(at::Tensor tensor, int destination, int tag) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    return c10d_work(group_->send(tensors, destination, tag));
  }
  std::unique_ptr<CommWork> recv(at::Tensor tensor, int source, int tag) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    return c10d_work(group_->recv(tensors, source, tag));
  }
  void barrier() override { group_->barrier(c10d::BarrierOptions())->wait(); }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> group_;
};

class EventPhaseClock : public PhaseClock {
 public:
  EventPhaseClock(int marks, int gpu) : gpu_(static_cast<c10::DeviceIndex>(gpu)) {
    events_.reserve(marks);
    for (int i = 0; i < marks; ++i) {
      events_.emplace_back(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
    }
  }
  void mark(int index) override {
    if (index == 0) start_ = std::chrono::steady_clock::now();
    events_.at(index).record(c10::cuda::getCurrentCUDAStream(gpu_));
    last_ = index;
  }
  void finish() override { events_.at(last_).synchronize(); }
  double elapsed_ms(int from, int to) const override {
    return events_.at(from).elapsedTime(events_.at(to));
  }
  double at_us(int index) const override {
    const double start =
        std::chrono::duration<double, std::micro>(start_.time_since_epoch()).count();
    return start + 1000.0 * elapsed_ms(0, index);
  }

 private:
  c10::DeviceIndex gpu_;
  std::vector<c10::Event> events_;
  std::chrono::steady_clock::time_point start_;
  int last_ = 0;
};

}  // namespace

bool built_with_cuda() { return true; }

int device_count() { return static_cast<int>(c10::cuda::device_count()); }

std::string device_name(int gpu) {
  return at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(gpu))->name;
}

void use_device(int gpu) { c10::cuda::set_device(static_cast<c10::DeviceIndex>(gpu)); }

void set_fp32_math(Fp32Math math) {
  at::globalContext().setAllowTF32CuDNN(math.cudnn_tf32);
  at::globalContext().setAllowTF32CuBLAS(math.cublas_tf32);
}

Fp32Math fp32_math() {
  return {at::globalContext().allowTF32CuDNN(), at::globalContext().allowTF32CuBLAS()};
}

bool set_bf16_autocast(bool enabled) {
  const bool was = at::autocast::is_autocast_enabled(at::kCUDA);
  at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCUDA, enabled);
  return was;
}

std::unique_ptr<Communicator> make_nccl_communicator(const c10::intrusive_ptr<c10d::Store>& store,
                                                     int rank, int world_size,
                                                     std::chrono::milliseconds timeout, int gpu) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
  group->setBoundDeviceId(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(gpu)));
  return std::make_unique<NcclCommunicator>(std::move(group));
}

DeviceMemory peak_memory(int gpu) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(gpu));
  const auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  return {stats.allocated_bytes[aggregate].peak, stats.reserved_bytes[aggregate].peak};
}

void reset_peak_memory(int gpu) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(gpu));
}

void synchronize(int gpu) {
  c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(gpu)).synchronize();
}

std::unique_ptr<PhaseClock> make_event_phase_clock(int marks, int gpu) {
  return std::make_unique<EventPhaseClock>(marks, gpu);
}

}  // namespace runtime::cuda
