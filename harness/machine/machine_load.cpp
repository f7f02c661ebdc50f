#include "harness/machine/machine_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace harness {

namespace fs = std::filesystem;

namespace {

double cpu_seconds(const rusage& usage) {
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double own_and_children_cpu_seconds() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return cpu_seconds(self) + cpu_seconds(children);
}

std::string whole_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double share(double part, double whole) {
  return whole > 0 ? std::clamp(part / whole, 0.0, 1.0) : 0.0;
}

}  // namespace

CpuTicks parse_cpu_ticks(std::string_view proc_stat) {
  std::istringstream lines{std::string(proc_stat)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    if (name != "cpu") continue;
    std::vector<long long> ticks;
    for (long long value; fields >> value;) ticks.push_back(value);
    if (ticks.size() < 8) break;
    // user nice system idle iowait irq softirq steal [guest guest_nice: inside user already]
    return {ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6], ticks[3] + ticks[4], ticks[7]};
  }
  throw std::runtime_error("/proc/stat: no 'cpu' line of eight numbers");
}

LoadSample sample_machine_load(const fs::path& proc) {
  LoadSample sample;
  sample.ticks = parse_cpu_ticks(whole_file(proc / "stat"));
  std::istringstream(whole_file(proc / "loadavg")) >> sample.load_average_1m;
  sample.own_cpu_s = own_and_children_cpu_seconds();
  return sample;
}

MachineLoad load_between(const LoadSample& earlier, const LoadSample& later, long ticks_per_s) {
  const double hz = double(ticks_per_s);
  const double busy = double(later.ticks.busy - earlier.ticks.busy) / hz;
  const double idle = double(later.ticks.idle - earlier.ticks.idle) / hz;
  const double steal = double(later.ticks.steal - earlier.ticks.steal) / hz;
  const double total = busy + idle + steal;
  MachineLoad load;
  load.load_average_1m = later.load_average_1m;
  load.others_share = share(busy - (later.own_cpu_s - earlier.own_cpu_s), total);
  load.steal_share = share(steal, total);
  load.seconds = total;
  return load;
}

bool was_busy(const MachineLoad& load) {
  return load.others_share > kBusyOthersShare || load.steal_share > kBusyStealShare;
}

std::string describe_load(const std::string& when, const MachineLoad& load) {
  char text[160];
  std::snprintf(text, sizeof text,
                "%s: other processes used %.0f%% of the cores, %.0f%% stolen, load average %.2f",
                when.c_str(), load.others_share * 100, load.steal_share * 100,
                load.load_average_1m);
  return text;
}

nlohmann::json load_to_json(const MachineLoad& load) {
  return {{"load_average_1m", load.load_average_1m},
          {"others_share", load.others_share},
          {"steal_share", load.steal_share},
          {"core_seconds", load.seconds},
          {"busy", was_busy(load)}};
}

}  // namespace harness
