// The CPUs' wake-up latency held at zero while a run goes (run.cpu_idle: poll). A rank that
// blocks on a message leaves its core idle; how soon the core wakes when the message arrives is
// the machine's idle policy. On a virtual machine whose idle vCPUs halt without polling (a
// Firecracker guest: cpuidle haltpoll with guest_halt_poll_ns=0), a halted vCPU gives its
// physical core back to the host, and waking it again took milliseconds now and then: a 2-stage
// DAPPLE pipeline over a 1 Gbit/s emulated link ran its iterations in two groups, 10.3-11.5 ms
// and 12.9-13.8 ms, about half in each, so each run's p50 fell on either side by chance.
//
// Linux's PM QoS interface is the standard remedy, the one latency benchmarks and tuned's
// latency-performance profile use: while a process holds /dev/cpu_dma_latency open with 0
// written to it, the cpuidle governor picks only idle states of zero exit latency (polling), so
// an idle core spins until it has work and wakes at once. The request lasts exactly as long as
// the file is open: the kernel drops it when the holder exits, however it exits, so a harness
// that dies leaves nothing behind. It affects every core of this machine, not ranks on others.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace harness {

// Where the kernel takes CPU wake-up latency requests; tests may pass another file.
inline const std::filesystem::path kCpuDmaLatencyDevice = "/dev/cpu_dma_latency";

// Why this process cannot hold the latency (the device missing, or not writable: root only, by
// default), as "<path>: <reason>"; empty when it can.
std::string cpu_wake_latency_unavailable(
    const std::filesystem::path& device = kCpuDmaLatencyDevice);

// The latency this machine's idle states must currently meet, in microseconds, as the kernel
// reports it (the smallest request held by any process; 2000000000 when none is held).
long long current_cpu_wake_latency_us(const std::filesystem::path& device = kCpuDmaLatencyDevice);

// Where Linux describes the CPUs' idle states.
inline const std::filesystem::path kCpuSysfs = "/sys/devices/system/cpu";

// This machine's idle policy as env.json records it: the cpuidle driver and governor, and CPU
// 0's idle states with their exit latencies in us ({"driver": "haltpoll", "governor":
// "haltpoll", "states": [{"name": "POLL", "exit_latency_us": 0}, ...]}); a value Linux does not
// give (no cpuidle, a container without sysfs) is null, missing states an empty list.
nlohmann::json cpu_idle_description(const std::filesystem::path& cpu_sysfs = kCpuSysfs);

// Holds the wake-up latency at 0 us from construction until destruction (or move-from).
// Throws std::runtime_error naming the device and the reason when the kernel refuses.
class CpuWakeLatencyHold {
 public:
  explicit CpuWakeLatencyHold(const std::filesystem::path& device = kCpuDmaLatencyDevice);
  ~CpuWakeLatencyHold();
  CpuWakeLatencyHold(CpuWakeLatencyHold&& other) noexcept;
  CpuWakeLatencyHold& operator=(CpuWakeLatencyHold&& other) noexcept;
  CpuWakeLatencyHold(const CpuWakeLatencyHold&) = delete;
  CpuWakeLatencyHold& operator=(const CpuWakeLatencyHold&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace harness
