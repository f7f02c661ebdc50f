// The compute orders of the generated schedules, one rank at a time (pipeline_schedule.h names
// them). Each returns rank `rank`'s F, B, I and W actions; stage indexes are the model's.
#pragma once

#include <vector>

#include "runtime/pipeline/pipeline_schedule.h"

namespace runtime::schedule_orders {

std::vector<PipelineAction> gpipe(int rank, int micro_batches);
std::vector<PipelineAction> one_f_one_b(int ranks, int rank, int micro_batches);
std::vector<PipelineAction> interleaved(int ranks, int stages_per_rank, int rank,
                                        int micro_batches);
std::vector<PipelineAction> zero_bubble_h1(int ranks, int rank, int micro_batches);
std::vector<PipelineAction> zero_bubble_v(int ranks, int rank, int micro_batches);

}  // namespace runtime::schedule_orders
