// The emulated cluster's plan (harness/emulation/network_plan.h): link quantities parsed as tc
// writes them, the namespaces, addresses and exact commands, and which leftovers are stale;
// then (root only) the plan built on this host and removed.
#include "harness/emulation/network_plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "common/child_process.h"
#include "harness/emulation/emulated_network.h"
#include "harness/emulation/link_quantities.h"

namespace {

using harness::Command;

TEST(LinkQuantities, RatesDelaysAndLossAsTcWritesThem) {
  EXPECT_DOUBLE_EQ(harness::parse_link_rate("100mbit"), 100e6);
  EXPECT_DOUBLE_EQ(harness::parse_link_rate("2.5gbit"), 2.5e9);
  EXPECT_DOUBLE_EQ(harness::parse_link_rate("125mbps"), 1e9);  // bytes per second
  EXPECT_DOUBLE_EQ(harness::parse_link_delay("100us"), 100e-6);
  EXPECT_DOUBLE_EQ(harness::parse_link_delay("1.5ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(harness::parse_link_loss("0.1%"), 0.1);
  EXPECT_EQ(harness::tc_rate(1e9), "1000000kbit");
  EXPECT_EQ(harness::tc_rate(2.5e5), "250kbit");
  EXPECT_EQ(harness::tc_delay(1.5e-3), "1500us");
  EXPECT_EQ(harness::tc_loss(0.25), "0.25%");
  for (const char* bad :
       {"fast", "1 gbit", "1gb", "-1mbit", "1e9bit", "nanmbit", "1kbit", "500gbit"}) {
    EXPECT_THROW(harness::parse_link_rate(bad), std::invalid_argument) << bad;
  }
  try {
    harness::parse_link_rate("1gb");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "'1gb' is not a rate like 100mbit or 1gbit (bit, kbit, mbit, gbit; or "
                 "bps, kbps, mbps, gbps)");
  }
  EXPECT_THROW(harness::parse_link_delay("1min"), std::invalid_argument);
  EXPECT_THROW(harness::parse_link_delay("11s"), std::invalid_argument);
  EXPECT_THROW(harness::parse_link_loss("101%"), std::invalid_argument);
}

TEST(NetworkPlan, TwoMachinesShapedWithDelayAndRate) {
  harness::EmulatedClusterShape shape;
  shape.machines = 2;
  shape.ranks_per_machine = 2;
  shape.inter_machine = {200e6, 1e-3, 0};
  const auto plan = harness::plan_network(shape, 4242);
  EXPECT_EQ(plan.prefix, "harness-4242-");
  ASSERT_EQ(plan.machines.size(), 2u);
  EXPECT_EQ(plan.machines[1].netns, "harness-4242-m1");
  EXPECT_EQ(plan.machines[1].address, "10.99.0.2");
  EXPECT_EQ(plan.machine_of(3).netns, "harness-4242-m1");
  // The switch first, then per machine: namespace, veth into the switch, address, shaping.
  EXPECT_EQ(plan.setup.front(), (Command{"ip", "netns", "add", "harness-4242-sw"}));
  const Command veth = {
      "ip",   "-n", "harness-4242-m0", "link",           "add", "eth0", "type", "veth", "peer",
      "name", "m0", "netns",           "harness-4242-sw"};
  EXPECT_NE(std::find(plan.setup.begin(), plan.setup.end(), veth), plan.setup.end());
  const Command netem = {"ip",    "netns", "exec", "harness-4242-m1", "tc", "qdisc", "add",
                         "dev",   "eth0",  "root", "handle",          "1:", "netem", "delay",
                         "1000us"};
  const Command tbf = {"ip",      "netns", "exec", "harness-4242-m1", "tc",    "qdisc",
                       "add",     "dev",   "eth0", "parent",          "1:1",   "handle",
                       "10:",     "tbf",   "rate", "200000kbit",      "burst", "25000b",
                       "latency", "100ms"};
  const auto at_netem = std::find(plan.setup.begin(), plan.setup.end(), netem);
  ASSERT_NE(at_netem, plan.setup.end());
  EXPECT_EQ(*(at_netem + 1), tbf);  // the rate under the delay
  EXPECT_EQ(plan.teardown, (std::vector<Command>{{"ip", "netns", "del", "harness-4242-m0"},
                                                 {"ip", "netns", "del", "harness-4242-m1"},
                                                 {"ip", "netns", "del", "harness-4242-sw"}}));
  const std::string text = harness::describe_network_plan(plan);
  EXPECT_NE(text.find("harness-4242-m0  eth0 10.99.0.1"), std::string::npos) << text;
}

TEST(NetworkPlan, TheTokenBucketIsAMillisecondOfTheRateAndAtLeast8KiB) {
  EXPECT_EQ(harness::token_bucket_bytes(1e9), 125000);   // 1 ms of 125 MB/s
  EXPECT_EQ(harness::token_bucket_bytes(200e6), 25000);  // the tbf command's "25000b" above
  EXPECT_EQ(harness::token_bucket_bytes(30e6), 8192);    // 3750 B would be under the floor
}

TEST(NetworkPlan, RateAloneIsTheRootQdiscAndNoShapeAddsNone) {
  harness::EmulatedClusterShape shape;
  shape.inter_machine.rate_bits_per_s = 1e9;
  auto plan = harness::plan_network(shape, 7);
  const Command tbf = {"ip",          "netns", "exec",    "harness-7-m0", "tc",   "qdisc", "add",
                       "dev",         "eth0",  "root",    "handle",       "1:",   "tbf",   "rate",
                       "1000000kbit", "burst", "125000b", "latency",      "100ms"};
  EXPECT_NE(std::find(plan.setup.begin(), plan.setup.end(), tbf), plan.setup.end());
  // TCP small queues: 2 ms of 1 Gbit/s (250 kB) per socket in the machine's namespace.
  const Command small_queues = {"ip",
                                "netns",
                                "exec",
                                "harness-7-m0",
                                "sh",
                                "-c",
                                "echo 250000 > /proc/sys/net/ipv4/tcp_limit_output_bytes"};
  EXPECT_NE(std::find(plan.setup.begin(), plan.setup.end(), small_queues), plan.setup.end());
  shape.inter_machine = {};
  plan = harness::plan_network(shape, 7);
  for (const auto& command : plan.setup) {
    EXPECT_EQ(std::find(command.begin(), command.end(), "tc"), command.end());
  }
}

TEST(NetworkPlan, OnlyADeadHarnesssNamespacesAreStale) {
  const std::vector<std::string> listed = {
      "harness-100-m0 (id: 3)", "harness-100-sw", "harness-200-m0",
      "harness-a-77",           "other",          "harness--x",
      "harness-12x-m0"};
  const auto stale = harness::stale_namespaces(listed, [](int pid) { return pid == 200; });
  EXPECT_EQ(stale, (std::vector<std::string>{"harness-100-m0", "harness-100-sw"}));
}

}  // namespace

// The plan built for real (root only): two machines whose link carries the configured rate and
// delay, and nothing of it left afterwards; a dead harness's namespaces removed.
namespace {

std::string run_text(const std::string& program, const std::vector<std::string>& args) {
  return harness::run_captured(program, args).out;
}

TEST(EmulatedNetwork, BuildsShapedMachinesAndRemovesThem) {
  harness::EmulatedClusterShape shape;
  shape.inter_machine = {200e6, 1e-3, 0};
  // Delay needs netem, which some kernels (this project's VMs among them) do not have; the
  // rate alone is tested then.
  const bool with_delay = harness::emulation_unavailable_reason(shape).empty();
  if (!with_delay) shape.inter_machine.delay_s = 0;
  if (const std::string why = harness::emulation_unavailable_reason(shape); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const int owner = static_cast<int>(::getpid());
  {
    harness::EmulatedNetwork network(harness::plan_network(shape, owner));
    const std::string namespaces = run_text("ip", {"netns", "list"});
    for (const auto& machine : network.plan().machines) {
      EXPECT_NE(namespaces.find(machine.netns), std::string::npos) << namespaces;
    }
    const std::string qdiscs = run_text("ip", {"netns", "exec", network.plan().machines[0].netns,
                                               "tc", "qdisc", "show", "dev", "eth0"});
    if (with_delay) {
      EXPECT_NE(qdiscs.find("delay 1ms"), std::string::npos) << qdiscs;
    }
    EXPECT_NE(qdiscs.find("tbf"), std::string::npos) << qdiscs;
    EXPECT_NE(qdiscs.find("rate 200Mbit"), std::string::npos) << qdiscs;
    // The machines reach each other and nothing else: no default route.
    const std::string routes =
        run_text("ip", {"-n", network.plan().machines[0].netns, "route", "show"});
    EXPECT_EQ(routes.find("default"), std::string::npos) << routes;
    EXPECT_NE(routes.find("10.99.0.0/16"), std::string::npos) << routes;
  }
  const std::string after = run_text("ip", {"netns", "list"});
  EXPECT_EQ(after.find("harness-" + std::to_string(owner) + "-"), std::string::npos) << after;

  // Namespaces of a harness that is gone (pid 2^22 + 1 is above the kernel's pid_max
  // default) are stale; a failed command leaves nothing behind either.
  const int dead = (1 << 22) + 1;
  ASSERT_EQ(harness::run_captured("ip", {"netns", "add", "harness-" + std::to_string(dead) + "-m0"})
                .exit_code,
            0);
  const auto removed = harness::remove_stale_namespaces();
  EXPECT_NE(std::find(removed.begin(), removed.end(), "harness-" + std::to_string(dead) + "-m0"),
            removed.end());
  harness::NetworkPlan broken = harness::plan_network(shape, owner);
  broken.setup.push_back({"ip", "link", "add", "x", "type", "no-such-kind"});
  EXPECT_THROW(harness::EmulatedNetwork{broken}, std::runtime_error);
  EXPECT_EQ(run_text("ip", {"netns", "list"}).find("harness-" + std::to_string(owner) + "-"),
            std::string::npos);
}

}  // namespace
