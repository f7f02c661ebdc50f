// How busy the machine was around a study: the load average, the share of all cores that other
// processes used, and the share the hypervisor stole. A timing taken beside other work is slower
// and noisier, and a reader of the table must know that it was (env.json's machine_load, and one
// warning line on the terminal).
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace harness {

// The "cpu" line of /proc/stat: every core's clock ticks since boot, summed.
struct CpuTicks {
  long long busy = 0;   // user, nice, system, irq, softirq
  long long idle = 0;   // idle, iowait
  long long steal = 0;  // taken by the hypervisor for other guests
};
// Throws std::runtime_error where the text holds no "cpu" line of at least eight numbers.
CpuTicks parse_cpu_ticks(std::string_view proc_stat);

// One look at the machine: its ticks, its 1-minute load average, and the CPU seconds this process
// and its reaped children (the ranks) have used.
struct LoadSample {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
  CpuTicks ticks;
  double load_average_1m = 0;
  double own_cpu_s = 0;
};
LoadSample sample_machine_load(const std::filesystem::path& proc = "/proc");

// Between two samples: the share of all cores busy with other processes' work (the busy time
// less this process's and its children's), and the share stolen; each in [0, 1].
struct MachineLoad {
  double load_average_1m = 0;  // at the later sample
  double others_share = 0;
  double steal_share = 0;
  double seconds = 0;  // the cores' time between the samples, over all cores
};
MachineLoad load_between(const LoadSample& earlier, const LoadSample& later, long ticks_per_s);

// Busy: other processes held more than a quarter of the cores, or more than 5% was stolen.
inline constexpr double kBusyOthersShare = 0.25;
inline constexpr double kBusyStealShare = 0.05;
bool was_busy(const MachineLoad& load);

// "before the study: other processes used 48% of the cores, 0% stolen, load average 1.93"
std::string describe_load(const std::string& when, const MachineLoad& load);

nlohmann::json load_to_json(const MachineLoad& load);

}  // namespace harness
