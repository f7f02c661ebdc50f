#include "runtime/pipeline/pipeline_executor.h"

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "runtime/compat/torch_compat.h"
#include "runtime/device/cuda_support.h"
#include "runtime/models/moe.h"
#include "runtime/models/synthetic_batch.h"

namespace runtime {

// Not in the anonymous namespace: PipelineStage::Impl, a class with linkage, holds one, which
// GCC flags (-Wsubobject-linkage) where this file is compiled inside runtime's unity group.
namespace pipeline_detail {

// Follows this thread's allocations on one device through c10's memory-reporting hook (the
// one the autograd profiler uses; the CPU allocator and CUDA's caching allocator both report
// to it): every allocation and free made there while it is installed.
class AllocationTracker : public c10::MemoryReportingInfoBase {
 public:
  explicit AllocationTracker(c10::DeviceType device) : device_(device) {}
  void reportMemoryUsage(void*, int64_t alloc_size, torch_compat::MemoryTotal,
                         torch_compat::MemoryTotal, c10::Device device) override {
    if (device.type() != device_) return;
    current_ += alloc_size;
    peak_ = std::max(peak_, current_);
  }
  bool memoryProfilingEnabled() const override { return true; }
  void reset() { current_ = peak_ = 0; }
  int64_t peak() const { return peak_; }

 private:
  c10::DeviceType device_;
  int64_t current_ = 0;
  int64_t peak_ = 0;
};

}  // namespace pipeline_detail

namespace {

double elapsed_ms(double start_us, double end_us) { return (end_us - start_us) / 1000.0; }

long long bytes_of(const at::Tensor& t) {
  return t.defined() ? static_cast<long long>(t.numel() * t.element_size()) : 0;
}

int activation_tag(int micro_batch) { return 2 * micro_batch; }
int gradient_tag(int micro_batch) { return 2 * micro_batch + 1; }

}  // namespace

struct PipelineStage::Impl {
  ZooModel& model;
  PipelineOptions options;
  Communicator& world;
  Communicator* replicas;
  const StageAssignment* stage = nullptr;
  const StageAssignment* previous = nullptr;  // null on the first stage
  const StageAssignment* next = nullptr;      // null on the last stage
  int stage_index = 0;
  int replica = 0;
  // Per-sample shape and dtype of the tensor entering this stage and of the one leaving it.
  std::vector<int64_t> input_shape, output_shape;
  c10::ScalarType input_dtype = c10::kFloat, output_dtype = c10::kFloat;
  std::vector<at::Tensor> parameters;
  std::vector<std::string> parameter_names;
  std::unique_ptr<GradientSync> reducer;
  std::shared_ptr<pipeline_detail::AllocationTracker> tracker;

  std::vector<MoeFeedForwardImpl*> mixtures;  // of this stage's layers

  // What a forward keeps for its backward.
  struct Stash {
    torch::Tensor input;      // requires grad on every stage but the first
    torch::Tensor output;     // the scaled loss on the last stage
    torch::Tensor auxiliary;  // the stage's weighted balancing loss (not on the last stage)
    long long boundary_bytes = 0;
  };
  std::map<int, Stash> stash;
  // Sends in flight, by micro-batch; each holds its tensor until waited for.
  struct PendingSend {
    int micro_batch;
    bool activations;
    std::unique_ptr<CommWork> work;
    torch::Tensor tensor;
  };
  std::vector<PendingSend> pending_sends;

  // Waits for the sends `done_with` selects; returns the milliseconds it took.
  template <typename Predicate>
  double wait_sends(Predicate done_with) {
    const double start = TraceRecorder::now_us();
    std::vector<PendingSend> still;
    for (auto& send : pending_sends) {
      if (done_with(send)) {
        send.work->wait();
      } else {
        still.push_back(std::move(send));
      }
    }
    pending_sends = std::move(still);
    return elapsed_ms(start, TraceRecorder::now_us());
  }

  Impl(ZooModel& m, PipelineOptions o, Communicator& w, Communicator* r)
      : model(m),
        options(std::move(o)),
        world(w),
        replicas(r),
        tracker(std::make_shared<pipeline_detail::AllocationTracker>(options.device.type())) {}

  bool first() const { return previous == nullptr; }
  bool last() const { return next == nullptr; }

  // The end of a compute phase as the device sees it (PipelineOptions::device says why).
  double compute_done_us() const {
    if (options.device.is_cuda()) cuda::synchronize(options.device.index());
    return TraceRecorder::now_us();
  }

  torch::Tensor run_layers(torch::Tensor x) {
    return model.forward_layers(x, stage->first_layer, stage->last_layer);
  }

  // The balancing loss of the stage's mixtures from the forward just run, weighted by
  // `share` of the global batch; undefined without mixtures or weight.
  torch::Tensor auxiliary_loss(double share) const {
    if (options.auxiliary_loss_weight == 0.0) return {};
    const torch::Tensor total = summed_auxiliary_loss(mixtures);
    return total.defined() ? total * (options.auxiliary_loss_weight * share) : total;
  }

  // Rows of micro-batch m (global sample indexes) and this replica's part of them.
  SampleRange micro_rows(int64_t global_batch, int m) const {
    return micro_batch_samples(global_batch, options.micro_batches, m);
  }

  // Receives the pieces of a tensor of `rows` rows from the peers listed in `transfers`
  // (those whose destination is this replica), concatenated in row order.
  torch::Tensor receive(const std::vector<SliceTransfer>& transfers, bool as_destination,
                        const StageAssignment& peers, const std::vector<int64_t>& shape,
                        c10::ScalarType dtype, int tag, PipelineIterationStats& stats,
                        TraceRecorder& trace, const std::string& what, int micro_batch) {
    std::vector<torch::Tensor> pieces;
    std::vector<std::unique_ptr<CommWork>> works;
    long long bytes = 0;
    std::vector<int> sources;
    const double start = TraceRecorder::now_us();
    for (const auto& t : transfers) {
      if ((as_destination ? t.destination_replica : t.source_replica) != replica) continue;
      const int peer = peers.ranks[as_destination ? t.source_replica : t.destination_replica];
      std::vector<int64_t> sizes{t.rows.size()};
      sizes.insert(sizes.end(), shape.begin(), shape.end());
      pieces.push_back(
          torch::empty(sizes, torch::TensorOptions().dtype(dtype).device(options.device)));
      works.push_back(world.recv(pieces.back(), peer, tag));
      bytes += bytes_of(pieces.back());
      sources.push_back(peer);
    }
    for (auto& w : works) w->wait();
    const double end = TraceRecorder::now_us();
    stats.recv_wait_ms += elapsed_ms(start, end);
    trace.add("recv " + what + " mb" + std::to_string(micro_batch), TraceCategory::kRecv, start,
              end, {{"micro_batch", micro_batch}, {"bytes", bytes}, {"peer", sources}});
    return pieces.size() == 1 ? pieces[0] : torch::cat(pieces, 0);
  }

  // Sends rows of `tensor` (this replica's rows, starting at global row `first_row`) to the
  // peers listed in `transfers`.
  void send(const std::vector<SliceTransfer>& transfers, bool as_source,
            const StageAssignment& peers, const torch::Tensor& tensor, int64_t first_row, int tag,
            PipelineIterationStats& stats, TraceRecorder& trace, const std::string& what,
            int micro_batch) {
    const double start = TraceRecorder::now_us();
    long long bytes = 0;
    std::vector<int> destinations;
    for (const auto& t : transfers) {
      if ((as_source ? t.source_replica : t.destination_replica) != replica) continue;
      const int peer = peers.ranks[as_source ? t.destination_replica : t.source_replica];
      torch::Tensor piece =
          tensor.detach().narrow(0, t.rows.begin - first_row, t.rows.size()).contiguous();
      pending_sends.push_back({micro_batch, as_source, world.send(piece, peer, tag), piece});
      bytes += bytes_of(piece);
      destinations.push_back(peer);
    }
    const double end = TraceRecorder::now_us();
    stats.send_ms += elapsed_ms(start, end);
    stats.bytes_sent += bytes;
    trace.add("send " + what + " mb" + std::to_string(micro_batch), TraceCategory::kSend, start,
              end, {{"micro_batch", micro_batch}, {"bytes", bytes}, {"peer", destinations}});
  }

  // The backward of micro-batch m: the output gradient from the next stage (the last stage
  // starts from its loss), autograd through this stage's layers, the input gradient to the
  // previous stage. Returns the boundary bytes the micro-batch held until now.
  long long backward_micro_batch(int m, const SampleRange& rows, const SampleRange& mine,
                                 PipelineIterationStats& stats, TraceRecorder& trace) {
    const int replicas_here = static_cast<int>(stage->ranks.size());
    auto found = stash.find(m);
    if (found == stash.end()) throw std::logic_error("backward before forward in the schedule");
    Stash entry = std::move(found->second);
    stash.erase(found);
    torch::Tensor output_gradient;
    if (!last()) {
      const auto transfers =
          slice_transfers(rows.size(), replicas_here, static_cast<int>(next->ranks.size()));
      output_gradient = receive(transfers, /*as_destination=*/false, *next, output_shape,
                                output_dtype, gradient_tag(m), stats, trace, "gradients", m);
      // The next stage sent this gradient after it received our activations: that send is
      // complete, and waiting for it now frees the activations it held.
      stats.send_ms += wait_sends(
          [m](const PendingSend& send) { return send.activations && send.micro_batch == m; });
    }
    const double start = TraceRecorder::now_us();
    if (last()) {
      torch::autograd::backward({entry.output});
    } else if (entry.auxiliary.defined()) {
      torch::autograd::backward({entry.output, entry.auxiliary},
                                {output_gradient, torch::ones_like(entry.auxiliary)});
    } else if (entry.output.requires_grad()) {
      torch::autograd::backward({entry.output}, {output_gradient});
    }  // else a first stage without parameters (a flatten alone): nothing to differentiate
    const double end = compute_done_us();
    stats.backward_ms += elapsed_ms(start, end);
    trace.add("backward mb" + std::to_string(m), TraceCategory::kBackward, start, end,
              {{"micro_batch", m}});
    if (!first()) {
      const auto transfers =
          slice_transfers(rows.size(), static_cast<int>(previous->ranks.size()), replicas_here);
      send(transfers, /*as_source=*/false, *previous, entry.input.grad(), mine.begin,
           gradient_tag(m), stats, trace, "gradients", m);
    }
    return entry.boundary_bytes;
  }

  // The end of an iteration: every send complete, then the replicas' gradient all-reduce.
  void finish_iteration(PipelineIterationStats& stats, TraceRecorder& trace) {
    const int replicas_here = static_cast<int>(stage->ranks.size());
    {
      const double start = TraceRecorder::now_us();
      stats.send_ms += wait_sends([](const PendingSend&) { return true; });
      trace.add("send wait", TraceCategory::kSend, start, TraceRecorder::now_us());
    }
    if (reducer) {
      const double start = TraceRecorder::now_us();
      reducer->finish_backward();
      const double end = TraceRecorder::now_us();
      stats.allreduce_ms = elapsed_ms(start, end);
      trace.add("allreduce stage " + std::to_string(stage_index), TraceCategory::kAllReduce, start,
                end, {{"replicas", replicas_here}});
    }
  }
};

PipelineStage::PipelineStage(ZooModel& model, PipelineOptions options, Communicator& world,
                             Communicator* replicas, const at::Tensor& sample_input)
    : impl_(std::make_unique<Impl>(model, std::move(options), world, replicas)) {
  Impl& s = *impl_;
  const auto& layout = s.options.layout;
  validate_layout(layout, static_cast<int>(model.layers().size()), world.world_size());
  stage_ = s.stage_index = layout.stage_of(world.rank());
  replica_ = s.replica = layout.replica_of(world.rank());
  s.stage = &layout.stages[stage_];
  if (stage_ > 0) s.previous = &layout.stages[stage_ - 1];
  if (stage_ + 1 < layout.stage_count()) s.next = &layout.stages[stage_ + 1];
  if ((replicas == nullptr) != (s.stage->ranks.size() == 1)) {
    throw std::invalid_argument("a stage with several replicas needs their communicator");
  }
  actions_ = make_stage_schedule(s.options.schedule, layout.stage_count(), stage_,
                                 s.options.micro_batches);

  // Boundary shapes and dtypes from one sample through the whole model on the stage's device
  // (eval mode: BatchNorm cannot train on one sample; shapes are the same).
  {
    torch::NoGradGuard no_grad;
    const PrecisionScope precision(s.options.precision, s.options.device.type());
    const bool was_training = model.is_training();
    model.eval();
    torch::Tensor x = sample_input.to(s.options.device);
    if (s.stage->first_layer > 0) x = model.forward_layers(x, 0, s.stage->first_layer - 1);
    s.input_shape.assign(x.sizes().begin() + 1, x.sizes().end());
    s.input_dtype = x.scalar_type();
    x = model.forward_layers(x, s.stage->first_layer, s.stage->last_layer);
    s.output_shape.assign(x.sizes().begin() + 1, x.sizes().end());
    s.output_dtype = x.scalar_type();
    model.train(was_training);
  }

  for (int i = s.stage->first_layer; i <= s.stage->last_layer; ++i) {
    const Layer& layer = model.layers()[i];
    for (const auto& item : layer.module.ptr()->named_parameters()) {
      s.parameters.push_back(item.value());
      s.parameter_names.push_back(layer.name + "." + item.key());
    }
    for (auto* mixture : mixtures_of(*layer.module.ptr())) s.mixtures.push_back(mixture);
  }
  if (replicas != nullptr && !s.parameters.empty()) {
    if (!s.options.replica_sync) {
      throw std::invalid_argument("a stage with replicas needs PipelineOptions::replica_sync");
    }
    s.reducer = s.options.replica_sync(s.parameters, s.parameter_names, *replicas);
  }
}

PipelineStage::~PipelineStage() = default;

std::vector<at::Tensor> PipelineStage::stage_parameters() const { return impl_->parameters; }
std::vector<std::string> PipelineStage::stage_parameter_names() const {
  return impl_->parameter_names;
}

PipelineIterationStats PipelineStage::run_iteration(const at::Tensor& global_input,
                                                    const at::Tensor& global_target,
                                                    TraceRecorder& trace) {
  Impl& s = *impl_;
  PipelineIterationStats stats;
  const int64_t global_batch = global_input.size(0);
  const int replicas_here = static_cast<int>(s.stage->ranks.size());
  s.tracker->reset();
  c10::DebugInfoGuard track_allocations(c10::DebugInfoKind::PROFILER_STATE, s.tracker);

  int in_flight = 0;
  long long boundary_bytes = 0;
  const double iteration_start = TraceRecorder::now_us();
  for (const PipelineAction& action : actions_) {
    const int m = action.micro_batch;
    const SampleRange rows = s.micro_rows(global_batch, m);
    if (rows.size() < replicas_here) {
      throw std::invalid_argument("micro-batch " + std::to_string(m) + " has " +
                                  std::to_string(rows.size()) + " samples, fewer than stage " +
                                  std::to_string(stage_) + "'s " + std::to_string(replicas_here) +
                                  " replicas");
    }
    const SampleRange mine = replica_samples(rows.size(), replicas_here, s.replica);
    if (action.kind == PipelineAction::Kind::kForward) {
      Impl::Stash entry;
      if (s.first()) {
        entry.input = global_input.narrow(0, rows.begin + mine.begin, mine.size());
      } else {
        const auto transfers =
            slice_transfers(rows.size(), static_cast<int>(s.previous->ranks.size()), replicas_here);
        entry.input = s.receive(transfers, /*as_destination=*/true, *s.previous, s.input_shape,
                                s.input_dtype, activation_tag(m), stats, trace, "activations", m);
        if (entry.input.is_floating_point()) entry.input.requires_grad_(true);
        entry.boundary_bytes += bytes_of(entry.input);
      }
      const double start = TraceRecorder::now_us();
      const double share = static_cast<double>(mine.size()) / static_cast<double>(global_batch);
      torch::Tensor output;
      {
        const PrecisionScope precision(s.options.precision, s.options.device.type());
        output = s.run_layers(entry.input);
        if (s.last()) {
          const torch::Tensor target =
              global_target.narrow(0, rows.begin + mine.begin, mine.size());
          output = training_loss(s.options.loss, output, target) * share;
        }
      }
      entry.auxiliary = s.auxiliary_loss(share);
      if (entry.auxiliary.defined()) stats.loss += entry.auxiliary.item<double>();
      if (s.last()) {
        stats.loss += output.item<double>();
        if (entry.auxiliary.defined()) output = output + entry.auxiliary;
        entry.auxiliary = torch::Tensor();
      }
      const double end = s.compute_done_us();
      stats.forward_ms += elapsed_ms(start, end);
      trace.add("forward mb" + std::to_string(m), TraceCategory::kForward, start, end,
                {{"micro_batch", m}});
      if (!s.last()) {
        const auto transfers =
            slice_transfers(rows.size(), replicas_here, static_cast<int>(s.next->ranks.size()));
        s.send(transfers, /*as_source=*/true, *s.next, output, mine.begin, activation_tag(m), stats,
               trace, "activations", m);
        entry.boundary_bytes += bytes_of(output);
      }
      entry.output = output;
      boundary_bytes += entry.boundary_bytes;
      stats.peak_boundary_bytes = std::max(stats.peak_boundary_bytes, boundary_bytes);
      s.stash.emplace(m, std::move(entry));
      stats.peak_in_flight = std::max(stats.peak_in_flight, ++in_flight);
    } else {
      boundary_bytes -= s.backward_micro_batch(m, rows, mine, stats, trace);
      --in_flight;
    }
  }
  s.finish_iteration(stats, trace);
  stats.span_ms = elapsed_ms(iteration_start, TraceRecorder::now_us());
  stats.peak_allocated_bytes = s.tracker->peak();
  return stats;
}

}  // namespace runtime
