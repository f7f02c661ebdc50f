// Data-parallel estimates: no overlap, P3-style overlap and normal overlap of the gradient
// all-reduce with the backward pass, plus the single-GPU memory limit behind gradient
// accumulation.
#pragma once

#include "planner/model/model_profile.h"
#include "planner/search/cost_model.h"
#include "planner/search/training_setup.h"

namespace harness::planner {

// floor((GPU memory - parameters x optimizer scaling) / peak activation per sample), >= 0.
int max_single_gpu_batch(const ModelProfile& profile, const TrainingSetup& setup,
                         double gpu_memory_bytes);

// Per-GPU batch of one accumulation step: the per-GPU batch gbs/n if it fits, else the
// smallest step count that divides it (searching up to half of it) and fits.
int gradient_accumulation_batch(int global_batch, int num_gpus, int max_batch);

struct DataParallelEstimates {
  double compute_s = 0.0;     // one GPU, whole global batch
  double all_reduce_s = 0.0;  // all parameters over all GPUs
  int max_single_gpu_batch = 0;
  int accumulation_batch = 0;
  double no_overlap = 0.0;  // speedups over one GPU
  double p3 = 0.0;
  double overlap = 0.0;
};

DataParallelEstimates estimate_data_parallel(const ModelProfile& profile,
                                             const TrainingSetup& setup, const CostModel& cost,
                                             int global_batch);

// The overlap model on explicit layers in forward order: whole-batch compute and all-reduce
// time per layer, `partial` the share of the batch in one accumulation step. Returns the
// communication time left exposed after the backward pass (the published planner's "offset").
// `with_compute_slots` adds the next block's compute as room for communication (P3);
// `index_quirk` reproduces the published code, which takes that compute by layer index
// instead of block index.
double exposed_all_reduce_time(const std::vector<double>& layer_compute_s,
                               const std::vector<double>& layer_all_reduce_s, double partial,
                               bool with_compute_slots, bool index_quirk);

}  // namespace harness::planner
