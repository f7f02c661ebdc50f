// The rank program of DDP-style systems: `harness-rank worker ...` runs one rank of one
// system at one point. The harness launches world_size of these; each trains the model on its
// shard of synthetic data and writes its per-iteration timings (pipeline systems hand over to
// rank/pipeline_worker.h).
#pragma once

#include <string>
#include <vector>

namespace runtime {

// argv as after "worker": --config FILE --rank R --world-size N --out DIR
// [--rendezvous tcp|file] [--master-addr A] [--master-port P] [--store-path F].
// Returns the process exit code.
int worker_main(const std::vector<std::string>& args);

}  // namespace runtime
