#include "runtime/protocol/cpu_pinning.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace runtime {

std::vector<int> rank_cpus(int local_rank, int threads, const std::vector<int>& allowed) {
  if (local_rank < 0 || threads < 1) {
    throw std::invalid_argument("run.pin_cpus: bad local rank or thread count");
  }
  const long long needed = (static_cast<long long>(local_rank) + 1) * threads;
  if (needed > static_cast<long long>(allowed.size())) {
    throw std::invalid_argument("run.pin_cpus: local rank " + std::to_string(local_rank) +
                                " with " + std::to_string(threads) + " thread(s) a rank needs " +
                                std::to_string(needed) + " cores, and this host allows " +
                                std::to_string(allowed.size()));
  }
  std::vector<int> cpus;
  const size_t first = allowed.size() - static_cast<size_t>(needed);
  for (size_t i = first; i < first + static_cast<size_t>(threads); ++i) cpus.push_back(allowed[i]);
  return cpus;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    throw std::runtime_error(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

void pin_process(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw std::runtime_error(std::string("sched_setaffinity: ") + std::strerror(errno));
  }
}

}  // namespace runtime
