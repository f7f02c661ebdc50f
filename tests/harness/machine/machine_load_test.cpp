// The machine's load around a study: /proc/stat's ticks read, the shares worked by hand, the
// busy rule's boundaries, and a real sample of this machine.
#include "harness/machine/machine_load.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using harness::CpuTicks;
using harness::LoadSample;

TEST(MachineLoad, ReadsTheCpuLineOfProcStat) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const CpuTicks ticks = harness::parse_cpu_ticks(
      "cpu  100 5 20 1000 30 2 3 40 7 0\ncpu0 50 2 10 500 15 1 1 20 0 0\n");
  EXPECT_EQ(ticks.busy, 100 + 5 + 20 + 2 + 3);
  EXPECT_EQ(ticks.idle, 1000 + 30);
  EXPECT_EQ(ticks.steal, 40);
  EXPECT_THROW(harness::parse_cpu_ticks("cpu0 1 2 3\nintr 5\n"), std::runtime_error);
  EXPECT_THROW(harness::parse_cpu_ticks("cpu 1 2 3 4 5 6 7\n"), std::runtime_error);
}

// Two cores for 2 s at 100 ticks/s: 400 ticks. Busy 250 of them (2.5 core-s), of which this
// process and its ranks used 1.0 s: others 1.5 of 4 core-s; 20 ticks stolen.
TEST(MachineLoad, OthersShareIsTheBusyTimeLessOurOwn) {
  LoadSample earlier, later;
  earlier.ticks = {1000, 5000, 100};
  later.ticks = {1250, 5130, 120};
  earlier.own_cpu_s = 3.0;
  later.own_cpu_s = 4.0;
  later.load_average_1m = 1.75;
  const harness::MachineLoad load = harness::load_between(earlier, later, 100);
  EXPECT_DOUBLE_EQ(load.seconds, 4.0);
  EXPECT_DOUBLE_EQ(load.others_share, 1.5 / 4.0);
  EXPECT_DOUBLE_EQ(load.steal_share, 0.2 / 4.0);
  EXPECT_DOUBLE_EQ(load.load_average_1m, 1.75);
  EXPECT_TRUE(harness::was_busy(load));
  EXPECT_EQ(harness::describe_load("during it", load),
            "during it: other processes used 38% of the cores, 5% stolen, load average 1.75");
  // Our own work is never another's: a share below 0 is 0, and no ticks is no load.
  later.own_cpu_s = 10.0;
  EXPECT_DOUBLE_EQ(harness::load_between(earlier, later, 100).others_share, 0.0);
  EXPECT_DOUBLE_EQ(harness::load_between(earlier, earlier, 100).others_share, 0.0);
}

TEST(MachineLoad, BusyAtMoreThanAQuarterOfTheCoresOrFivePercentStolen) {
  harness::MachineLoad load;
  load.others_share = 0.25;
  load.steal_share = 0.05;
  EXPECT_FALSE(harness::was_busy(load));
  load.others_share = 0.26;
  EXPECT_TRUE(harness::was_busy(load));
  load.others_share = 0;
  load.steal_share = 0.06;
  EXPECT_TRUE(harness::was_busy(load));
  EXPECT_EQ(harness::load_to_json(load)["busy"], true);
}

TEST(MachineLoad, SamplesThisMachine) {
  const LoadSample first = harness::sample_machine_load();
  const LoadSample second = harness::sample_machine_load();
  EXPECT_GT(first.ticks.busy + first.ticks.idle, 0);
  EXPECT_GE(second.ticks.idle, first.ticks.idle);
  EXPECT_GE(first.load_average_1m, 0);
  EXPECT_GT(second.own_cpu_s, 0);
}

}  // namespace
