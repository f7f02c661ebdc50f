// The rank program of `harness profile comm`: times collectives and point-to-point transfers
// over the communicator, one op and size at a time, in the manner of nccl-tests. Torch-free
// header: the CLI includes it.
#pragma once

#include <string>
#include <vector>

#include "runtime/protocol/comm_ops.h"

namespace runtime {

// "copy" moves no data between ranks: every rank copies the buffer into another at once, as the
// DDP reducer flattens gradients into a bucket and back (its host-side cost per byte on CPU).
// argv after "comm-worker": --rank R --world-size N --master-addr A --master-port P
// --ops a,b --sizes s1,s2 (bytes) --iterations I --warmup W [--after-compute K] --out FILE
// (written by rank 0); then, for each further measurement in the same process, `--then` and the
// flags among --ops, --sizes, --iterations, --warmup, --after-compute it changes, with its own
// --out. --after-compute K: K matrix products on every rank before each timed operation.
// Unless a measurement says `--reference off`, also times a plain c10d ProcessGroupGloo
// all-reduce (its own process group) over the same sizes, its iterations alternating with the
// profiler's, as an independent reference (the group is connected only if one asks for it).
int comm_benchmark_main(const std::vector<std::string>& args);

}  // namespace runtime
