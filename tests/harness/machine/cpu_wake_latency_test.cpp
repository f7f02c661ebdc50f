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

}  // namespace
