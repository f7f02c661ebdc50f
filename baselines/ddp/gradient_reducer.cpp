#include "baselines/ddp/gradient_reducer.h"
#include "common/json_file.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace baselines {

SyncMode parse_sync_mode(const std::string& name) {
  if (name == "overlap") return SyncMode::kOverlap;
  if (name == "sync") return SyncMode::kSync;
  if (name == "async") return SyncMode::kAsync;
  if (name == "per_tensor") return SyncMode::kPerTensor;
  throw std::invalid_argument("unknown gradient synchronisation mode '" + name + "'");
}

std::string to_string(SyncMode mode) {
  switch (mode) {
    case SyncMode::kOverlap:
      return "overlap";
    case SyncMode::kSync:
      return "sync";
    case SyncMode::kAsync:
      return "async";
    case SyncMode::kPerTensor:
      return "per_tensor";
  }
  return "?";
}

GradientCompression parse_gradient_compression(const std::string& name) {
  if (name == "none") return GradientCompression::kNone;
  if (name == "fp16") return GradientCompression::kFp16;
  if (name == "bf16") return GradientCompression::kBf16;
  if (name == "powersgd") return GradientCompression::kPowerSgd;
  throw std::invalid_argument("unknown gradient compression '" + name +
                              "' (expected none, fp16, bf16 or powersgd)");
}

const char* to_string(GradientCompression compression) {
  switch (compression) {
    case GradientCompression::kNone:
      return "none";
    case GradientCompression::kFp16:
      return "fp16";
    case GradientCompression::kBf16:
      return "bf16";
    case GradientCompression::kPowerSgd:
      return "powersgd";
  }
  return "?";
}

// A bucket's PowerSGD, running on its own thread after the previous bucket's (so that every
// rank issues the collectives of all buckets in one order), as an operation to wait for.
class ChainedWork : public runtime::CommWork {
 public:
  explicit ChainedWork(std::shared_future<void> done) : done_(std::move(done)) {}
  void wait() override { done_.get(); }

 private:
  std::shared_future<void> done_;
};

struct BucketState {
  at::Tensor flat;               // the bucket's gradients, concatenated
  at::Tensor wire;               // compressed: what is all-reduced (flat in half precision)
  std::vector<int64_t> offsets;  // element offset of each member tensor in `flat`
  size_t pending = 0;            // members whose gradient has not arrived this iteration
  bool launched = false;
  double launched_us = 0;  // when its all-reduce was issued (monotonic clock), for traces
  std::unique_ptr<runtime::CommWork> work;
};

struct GradientReducer::State {
  std::vector<at::Tensor> parameters;
  std::vector<std::string> names;
  runtime::Communicator* communicator = nullptr;
  ReducerOptions options;
  std::vector<Bucket> buckets;
  std::vector<BucketState> bucket_states;
  std::vector<size_t> bucket_of;       // parameter index -> bucket index
  std::vector<size_t> slot_in_bucket;  // parameter index -> position within its bucket
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;  // keep hooks alive
  size_t next_to_launch = 0;  // overlap: buckets launch strictly in order
  std::mutex mutex;
  runtime::TraceRecorder* trace = nullptr;
  std::vector<std::unique_ptr<PowerSgdBucket>> power_sgd;  // per bucket (compression: powersgd)
  std::shared_future<void> power_sgd_chain;                // the last bucket's, this step
  long long step = 0;                                      // finished backward passes

  bool power_sgd_now() const {
    return options.compression == GradientCompression::kPowerSgd &&
           step >= options.power_sgd.warmup_steps;
  }

  // Waits for bucket b's all-reduce; traced from its launch to the moment this rank saw it done.
  void wait_for(size_t b) {
    bucket_states[b].work->wait();
    // Compressed: back to the gradients' precision.
    if (bucket_states[b].wire.defined()) bucket_states[b].flat.copy_(bucket_states[b].wire);
    if (trace != nullptr) {
      trace->add("allreduce bucket " + std::to_string(b), runtime::TraceCategory::kAllReduce,
                 bucket_states[b].launched_us, runtime::TraceRecorder::now_us(),
                 {{"bucket", b}, {"bytes", buckets[b].bytes}});
    }
  }

  void reset_iteration() {
    for (size_t b = 0; b < buckets.size(); ++b) {
      bucket_states[b].pending = buckets[b].tensors.size();
      bucket_states[b].launched = false;
      bucket_states[b].work.reset();
    }
    next_to_launch = 0;
    power_sgd_chain = {};
  }

  void copy_in(size_t parameter) {
    BucketState& bucket = bucket_states[bucket_of[parameter]];
    const at::Tensor& grad = parameters[parameter].grad();
    const int64_t offset = bucket.offsets[slot_in_bucket[parameter]];
    bucket.flat.narrow(0, offset, grad.numel()).view_as(grad).copy_(grad);
  }

  void launch(size_t b) {
    BucketState& bucket = bucket_states[b];
    bucket.launched_us = runtime::TraceRecorder::now_us();
    if (power_sgd_now()) {
      if (!options.average) throw std::logic_error("PowerSGD averages (it is DDP's hook)");
      auto previous = power_sgd_chain;
      power_sgd_chain = std::async(std::launch::async, [this, b, previous] {
                          if (previous.valid()) previous.get();
                          power_sgd[b]->all_reduce_average(bucket_states[b].flat, *communicator);
                        }).share();
      bucket.work = std::make_unique<ChainedWork>(power_sgd_chain);
    } else if (options.compression == GradientCompression::kNone ||
               options.compression == GradientCompression::kPowerSgd) {  // warm-up
      if (options.average) bucket.flat.div_(communicator->world_size());
      bucket.work = communicator->all_reduce_sum(bucket.flat);
    } else {
      // As PyTorch's hooks: cast, then divide in the compressed precision.
      bucket.wire = bucket.flat.to(
          options.compression == GradientCompression::kFp16 ? at::kHalf : at::kBFloat16);
      if (options.average) bucket.wire.div_(communicator->world_size());
      bucket.work = communicator->all_reduce_sum(bucket.wire);
    }
    bucket.launched = true;
  }

  void copy_out(size_t b) {
    BucketState& bucket = bucket_states[b];
    for (size_t slot = 0; slot < buckets[b].tensors.size(); ++slot) {
      at::Tensor grad = parameters[buckets[b].tensors[slot]].grad();
      grad.copy_(bucket.flat.narrow(0, bucket.offsets[slot], grad.numel()).view_as(grad));
    }
  }

  // Autograd hook: parameter's gradient is final for this backward pass.
  void on_gradient_ready(size_t parameter) {
    std::lock_guard<std::mutex> lock(mutex);
    copy_in(parameter);
    const size_t b = bucket_of[parameter];
    if (--bucket_states[b].pending != 0) return;
    if (options.mode == SyncMode::kAsync) {
      launch(b);
      return;
    }
    while (next_to_launch < buckets.size() && bucket_states[next_to_launch].pending == 0) {
      launch(next_to_launch++);
    }
  }
};

GradientReducer::GradientReducer(std::vector<at::Tensor> parameters, std::vector<std::string> names,
                                 runtime::Communicator& communicator, ReducerOptions options)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  if (names.size() != parameters.size()) {
    throw std::invalid_argument("GradientReducer: one name per parameter");
  }
  s.parameters = std::move(parameters);
  s.names = std::move(names);
  s.communicator = &communicator;
  s.options = options;
  if (options.mode == SyncMode::kPerTensor) {
    if (options.compression != GradientCompression::kNone) {
      throw std::invalid_argument("gradient compression applies to buckets, not per_tensor mode");
    }
    return;
  }

  std::vector<TensorSlot> slots;
  for (const auto& p : s.parameters) {
    slots.push_back({static_cast<size_t>(p.numel()) * p.element_size(),
                     std::string(c10::toString(p.scalar_type()))});
  }
  if (options.mode == SyncMode::kAsync) {
    s.buckets = assign_buckets(slots, BucketOrder::kForward,
                               {static_cast<size_t>(options.bucket_mb * kMiB)});
  } else {
    s.buckets = assign_buckets(slots, BucketOrder::kReverse,
                               ddp_size_limits(options.first_bucket_mb, options.bucket_mb));
  }
  s.bucket_of.assign(s.parameters.size(), 0);
  s.slot_in_bucket.assign(s.parameters.size(), 0);
  s.bucket_states.resize(s.buckets.size());
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    int64_t elements = 0;
    for (size_t slot = 0; slot < s.buckets[b].tensors.size(); ++slot) {
      const size_t p = s.buckets[b].tensors[slot];
      s.bucket_of[p] = b;
      s.slot_in_bucket[p] = slot;
      s.bucket_states[b].offsets.push_back(elements);
      elements += s.parameters[p].numel();
    }
    s.bucket_states[b].flat =
        at::empty({elements}, s.parameters[s.buckets[b].tensors[0]].options());
    if (options.compression == GradientCompression::kPowerSgd) {
      std::vector<std::vector<int64_t>> shapes;
      for (size_t p : s.buckets[b].tensors) shapes.push_back(s.parameters[p].sizes().vec());
      PowerSgdOptions power_sgd = options.power_sgd;
      power_sgd.seed += 1000 * b;  // each bucket's Qs their own
      s.power_sgd.push_back(
          std::make_unique<PowerSgdBucket>(shapes, s.bucket_states[b].offsets, power_sgd));
    }
  }
  s.reset_iteration();

  if (options.mode == SyncMode::kOverlap || options.mode == SyncMode::kAsync) {
    std::weak_ptr<State> weak = state_;
    for (size_t p = 0; p < s.parameters.size(); ++p) {
      auto accumulator = torch::autograd::impl::grad_accumulator(s.parameters[p]);
      accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
          [weak, p](const torch::autograd::variable_list& outputs,
                    const torch::autograd::variable_list&) {
            if (auto state = weak.lock()) state->on_gradient_ready(p);
            return outputs;
          }));
      s.accumulators.push_back(std::move(accumulator));
    }
  }
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::finish_backward() {
  State& s = *state_;
  switch (s.options.mode) {
    case SyncMode::kPerTensor: {
      std::vector<std::unique_ptr<runtime::CommWork>> works;
      for (auto& p : s.parameters) {
        at::Tensor grad = p.grad();
        if (s.options.average) grad.div_(s.communicator->world_size());
        works.push_back(s.communicator->all_reduce_sum(grad));
      }
      for (auto& work : works) work->wait();
      return;
    }
    case SyncMode::kSync:
      for (size_t b = 0; b < s.buckets.size(); ++b) {
        for (size_t p : s.buckets[b].tensors) s.copy_in(p);
        s.launch(b);
        s.wait_for(b);
        s.copy_out(b);
      }
      s.reset_iteration();
      ++s.step;
      return;
    case SyncMode::kOverlap:
    case SyncMode::kAsync:
      for (size_t b = 0; b < s.buckets.size(); ++b) {
        if (!s.bucket_states[b].launched) {
          throw std::runtime_error(
              "gradient bucket " + std::to_string(b) +
              " was never filled: a parameter got no gradient in this backward pass (first "
              "member: " +
              s.names[s.buckets[b].tensors[0]] + ")");
        }
      }
      // Wait in launch order; each copy-out overlaps the all-reduces still running.
      for (size_t b = 0; b < s.buckets.size(); ++b) {
        s.wait_for(b);
        s.copy_out(b);
      }
      s.reset_iteration();
      ++s.step;
      return;
  }
}

const std::vector<Bucket>& GradientReducer::buckets() const { return state_->buckets; }

void GradientReducer::set_trace(runtime::TraceRecorder* trace) { state_->trace = trace; }

std::string GradientReducer::buckets_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (size_t b = 0; b < state_->buckets.size(); ++b) {
    const Bucket& bucket = state_->buckets[b];
    nlohmann::json names = nlohmann::json::array();
    for (size_t p : bucket.tensors) names.push_back(state_->names[p]);
    // What the all-reduces carry: the bucket, half of it in 2-byte elements, or PowerSGD's
    // factors and uncompressed gradients (after its warm-up steps).
    const GradientCompression compression = state_->options.compression;
    const size_t wire_bytes = compression == GradientCompression::kNone ? bucket.bytes
                              : compression == GradientCompression::kPowerSgd
                                  ? static_cast<size_t>(state_->power_sgd[b]->wire_bytes(
                                        state_->bucket_states[b].flat.element_size()))
                                  : bucket.bytes / 2;
    out.push_back({{"index", b},
                   {"bytes", bucket.bytes},
                   {"wire_bytes", wire_bytes},
                   {"compression", to_string(state_->options.compression)},
                   {"size_limit", bucket.size_limit},
                   {"dtype", bucket.dtype},
                   {"tensors", bucket.tensors.size()},
                   {"parameters", names}});
  }
  return harness::json_text(out, 1);
}

ReducerOptions replica_sum_options(double bucket_mb, double first_bucket_mb) {
  ReducerOptions options;
  options.mode = SyncMode::kSync;
  options.average = false;
  options.bucket_mb = bucket_mb;
  options.first_bucket_mb = first_bucket_mb;
  return options;
}

runtime::GradientSyncFactory replica_sum_factory(double bucket_mb, double first_bucket_mb) {
  const ReducerOptions options = replica_sum_options(bucket_mb, first_bucket_mb);
  return [options](std::vector<at::Tensor> parameters, std::vector<std::string> names,
                   runtime::Communicator& group) -> std::unique_ptr<runtime::GradientSync> {
    return std::make_unique<GradientReducer>(std::move(parameters), std::move(names), group,
                                             options);
  };
}

}  // namespace baselines
