// `harness spmd`: HiDup's per-operator SPMD search (planner/spmd) on one of the zoo's
// transformers over N ranks, priced by this machine's comm.json and a rank's FLOP/s.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace harness {

struct SpmdRequest {
  std::string model;  // llama, bert, bert_moe, vit, vit_moe
  int ranks = 0;
  int64_t batch = 0;  // sequences an iteration, over all ranks
  // The model's shape as a spec's `model:` gives it; 0: the zoo's default.
  int64_t tokens = 0, width = 0, depth = 0, heads = 0, kv_heads = 0, vocab = 0;
  int64_t classes = 0;         // the encoders' classifier
  std::vector<int64_t> image;  // vit, vit_moe: channels, height, width
  int64_t experts = 0, top_k = 0, moe_every = 0;
  double capacity_factor = 0;
  std::string comm;   // comm.json of `harness profile comm`
  double gflops = 0;  // one rank's; 0 with measure_compute
  // HiDup's profiled cost model: each operator timed by the rank program before the search
  // (harness/study/spmd_measured_compute.h), with the ranks' loss, optimizer and threads.
  bool measure_compute = false;
  std::string loss = "cross_entropy", optimizer = "adamw";
  int threads = 1;
  int co_located = 1;  // ranks that will share this machine's cores, timed in lockstep
  std::string out_dir;
  // HiDup's Table IV after the search, where any is given: percent noise on each operator's
  // FLOPs and each collective's bandwidth, every collective's time scaled; over seeds.
  std::optional<double> noise_flops, noise_bandwidth, comm_scale;
  int noise_seeds = 10;
  long long noise_seed = 1;
};

// Searches and prints the operator and strategy tables (and the noise study's); with out_dir,
// writes spmd_plan.json (and spmd_noise.json) there. Throws InputError on bad input (before
// anything is written). Returns the exit code.
int run_spmd(const SpmdRequest& request, std::ostream& out);

// Registers `harness spmd`. Input errors print "error: <message>" and exit 2.
void add_spmd_command(CLI::App& app);

}  // namespace harness
