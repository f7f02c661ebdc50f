// Which cores a rank runs on when a spec asks (run.pin_cpus). A process that the scheduler may
// move is at the mercy of where it lands, which can make a rank's runs bimodal, and iterations
// of one process differ far less than processes do. Benchmark launchers pin for that reason
// (Open MPI's --bind-to core, torchrun's affinity options). Torch-free.
#pragma once

#include <vector>

namespace runtime {

// The cores of local rank `local_rank` with `threads` threads among the cores this process
// may use (`allowed`, ascending): consecutive blocks counted down from the highest, so rank 0
// gets the last `threads` cores and core 0 -- where the launcher, interrupts and most daemons
// run -- is taken last. Throws std::invalid_argument when the ranks of this host need more cores
// than are allowed.
std::vector<int> rank_cpus(int local_rank, int threads, const std::vector<int>& allowed);

// The cores this process may run on now (sched_getaffinity).
std::vector<int> allowed_cpus();

// Binds this process (and the threads it starts afterwards) to `cpus`; throws
// std::runtime_error when the kernel refuses.
void pin_process(const std::vector<int>& cpus);

}  // namespace runtime
