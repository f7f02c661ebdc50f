// torch.distributed.pipelining's schedule CSV (what its schedules' _dump_csv writes and
// _load_csv reads): row r holds pipeline rank r's actions, one cell per time step, an empty
// cell for a step the rank idles, each cell in its notation ("0F0", "1I3", "2W1", "0SEND_F2").
// The harness reads the compute cells (F, B, I, W) and places the sends and receives itself
// (with_communication), so a compute_only and a compute_comms file give the same schedule.
#pragma once

#include <string>
#include <vector>

#include "runtime/pipeline/pipeline_schedule.h"

namespace runtime {

// The schedule in `text`: ranks = rows, stages and micro-batches as many as the cells name, each
// stage on the row it appears in. Throws std::invalid_argument "SOURCE:LINE:COLUMN: ..." for a
// cell it cannot read or a stage on two rows; the table is not validated (validate_schedule).
ScheduleTable read_schedule_csv(const std::string& text, const std::string& source);

// One action in the notation ("2I5"); throws std::invalid_argument with the reason.
PipelineAction parse_action(const std::string& cell);
// A rank's list as describe_actions writes it ("0F0 0SEND_F0 0F1 ..."), in order; throws
// std::invalid_argument (parse_action's reason) at a word it cannot read.
std::vector<PipelineAction> parse_actions(const std::string& order);

}  // namespace runtime
