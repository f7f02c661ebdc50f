#include "harness/machine/cpu_wake_latency.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/test_util.h"

namespace {

using harness::CpuWakeLatencyHold;
using harness_test::TempDir;

std::string bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string message_of(const std::filesystem::path& device) {
  try {
    CpuWakeLatencyHold hold(device);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

// The request is the kernel's binary 32-bit integer: a hold writes 0 us where it opens, from the
// file's start (a regular file stands in for the device).
TEST(CpuWakeLatency, AHoldWritesZeroMicrosecondsAsA32BitInteger) {
  TempDir dir;
  const auto file = dir.write("latency", "\x01\x02\x03\x04");
  {
    CpuWakeLatencyHold hold(file);
    EXPECT_EQ(bytes_of(file), std::string(4, '\0'));
  }
  const std::int32_t value = 1234;
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(&value), sizeof value);
  EXPECT_EQ(harness::current_cpu_wake_latency_us(file), 1234);
  dir.write("short", "\x01\x02");
  EXPECT_THROW(
      {
        try {
          harness::current_cpu_wake_latency_us(dir.path() / "short");
        } catch (const std::runtime_error& e) {
          EXPECT_EQ(std::string(e.what()),
                    (dir.path() / "short").string() + ": not a 32-bit latency value");
          throw;
        }
      },
      std::runtime_error);
}

// A machine without the device (or without the right to write it) is told in one line, by the
// check and by a hold alike.
TEST(CpuWakeLatency, AMissingDeviceIsNamedWithTheReason) {
  TempDir dir;
  const auto missing = dir.path() / "no_such_device";
  const std::string expected = missing.string() + ": No such file or directory";
  EXPECT_EQ(harness::cpu_wake_latency_unavailable(missing), expected);
  EXPECT_EQ(message_of(missing), expected);
  EXPECT_EQ(harness::cpu_wake_latency_unavailable(dir.write("writable", "")), "");
}

// The kernel's own device: the machine's latency target is 0 us exactly while a hold (or the
// hold it was moved into) lives, and what it was before once the last one is gone.
TEST(CpuWakeLatency, TheKernelsTargetIsZeroWhileAHoldLives) {
  if (const std::string why = harness::cpu_wake_latency_unavailable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const long long before = harness::current_cpu_wake_latency_us();
  if (before == 0) GTEST_SKIP() << "another process holds the latency at 0 already";
  {
    CpuWakeLatencyHold first;
    EXPECT_EQ(harness::current_cpu_wake_latency_us(), 0);
    CpuWakeLatencyHold second(std::move(first));
    {
      CpuWakeLatencyHold dropped(std::move(first));  // moved from: holds nothing
    }
    EXPECT_EQ(harness::current_cpu_wake_latency_us(), 0);
  }
  EXPECT_EQ(harness::current_cpu_wake_latency_us(), before);
}

// env.json's description of the idle states, read from a sysfs tree written here: the states in
// the kernel's order (state10 after state2), a latency that is not all a number and a missing
// name as null; no cpuidle at all is nulls and no states.
TEST(CpuWakeLatency, TheIdleStatesAreDescribedFromSysfs) {
  TempDir dir;
  dir.write("cpu/cpuidle/current_driver", "haltpoll\n");
  dir.write("cpu/cpuidle/current_governor_ro", "haltpoll\n");
  dir.write("cpu/cpu0/cpuidle/state0/name", "POLL\n");
  dir.write("cpu/cpu0/cpuidle/state0/latency", "0\n");
  dir.write("cpu/cpu0/cpuidle/state2/name", "C6\n");
  dir.write("cpu/cpu0/cpuidle/state2/latency", "133\n");
  dir.write("cpu/cpu0/cpuidle/state10/latency", "deep\n");
  dir.write("cpu/cpu0/cpuidle/state11/name", "C10\n");
  dir.write("cpu/cpu0/cpuidle/state11/latency", "12 us\n");
  const nlohmann::json described = harness::cpu_idle_description(dir.path() / "cpu");
  EXPECT_EQ(described, nlohmann::json::parse(R"({"driver": "haltpoll", "governor": "haltpoll",
      "states": [{"name": "POLL", "exit_latency_us": 0}, {"name": "C6", "exit_latency_us": 133},
                 {"name": null, "exit_latency_us": null},
                 {"name": "C10", "exit_latency_us": null}]})"))
      << described.dump();
  EXPECT_EQ(harness::cpu_idle_description(dir.path() / "none"),
            nlohmann::json::parse(R"({"driver": null, "governor": null, "states": []})"));
}

}  // namespace
