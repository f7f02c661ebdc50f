// Cost of simulating one training iteration. Goal (issue 8): one iteration of a DAPPLE plan of
// BERT-48 on 1024 GPUs in under 1 s on one core, cost linear in the number of events. The
// model is a synthetic 48-layer chain (planner/model/synthetic_profile.h, seed 48) standing in for
// BERT-48, so the benchmark runs without the reference profiles; the plan is 4 stages of 12
// layers, each data-parallel over a quarter of the GPUs (machines of 8), 16 micro-batches per
// iteration unless the benchmark varies them. Counters: events (processed by the engine) and
// events/s; time per event staying flat across sizes is the linear-growth check.
#include <benchmark/benchmark.h>

#include "planner/model/synthetic_profile.h"
#include "simulator/data_parallel_system.h"
#include "simulator/pipeline_system.h"

namespace harness::simulator {
namespace {

LayerCosts bert48_like() {
  planner::SyntheticChainOptions options;
  options.layers = 48;
  options.seed = 48;
  return layer_costs_from_graph(planner::synthetic_chain_graph(options), 32);
}

ClusterConfig v100_cluster(int gpus) {
  ClusterConfig config;
  config.gpus_per_machine = ClusterConfig::machines_for(gpus, 8);
  config.intra_bandwidth = 25e9;
  config.inter_bandwidth = 3e9;
  config.inter_p2p_bandwidth = 1e9;
  return config;
}

PipelineSystem dapple_plan(const LayerCosts& costs, int gpus, int stages, int micro_batches) {
  PipelineSystem system;
  system.schedule = PipelineSchedule::kDapple;
  system.micro_batches = micro_batches;
  system.global_batch = 32.0 * gpus;
  const int layers_per_stage = costs.size() / stages;
  const int replicas = gpus / stages;
  for (int s = 0; s < stages; ++s) {
    PipelineStage stage;
    for (int l = s * layers_per_stage; l < (s + 1) * layers_per_stage; ++l)
      stage.layers.push_back(l);
    for (int r = s * replicas; r < (s + 1) * replicas; ++r) stage.ranks.push_back(r);
    system.stages.push_back(stage);
  }
  return system;
}

void report(benchmark::State& state, std::uint64_t events) {
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

// Args: GPUs, micro-batches.
void BM_DappleIteration(benchmark::State& state) {
  const LayerCosts costs = bert48_like();
  const int gpus = static_cast<int>(state.range(0));
  const Cluster cluster(v100_cluster(gpus));
  const PipelineSystem plan = dapple_plan(costs, gpus, 4, static_cast<int>(state.range(1)));
  std::uint64_t events = 0;
  for (auto _ : state) {
    ComputeNoise none;
    const SimulatedIteration it = simulate_pipeline(cluster, costs, plan, gpus, none);
    events = it.times.events;
    benchmark::DoNotOptimize(it.times.makespan);
  }
  report(state, events);
}
BENCHMARK(BM_DappleIteration)
    ->ArgsProduct({{64, 128, 256, 512, 1024}, {16}})
    ->Args({1024, 4})
    ->Args({1024, 8})
    ->Args({1024, 32})
    ->Unit(benchmark::kMillisecond);

// DDP (overlap, 25 MiB buckets) on the same chain: ring all-reduces over every GPU.
void BM_DdpIteration(benchmark::State& state) {
  const LayerCosts costs = bert48_like();
  const int gpus = static_cast<int>(state.range(0));
  const Cluster cluster(v100_cluster(gpus));
  DataParallelSystem system;
  system.world = gpus;
  system.batch_per_rank = 32;
  std::uint64_t events = 0;
  for (auto _ : state) {
    ComputeNoise none;
    const SimulatedIteration it = simulate_data_parallel(cluster, costs, system, none);
    events = it.times.events;
    benchmark::DoNotOptimize(it.times.makespan);
  }
  report(state, events);
}
BENCHMARK(BM_DdpIteration)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace harness::simulator

BENCHMARK_MAIN();
