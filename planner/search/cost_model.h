// Communication costs: gradient all-reduce within a GPU group and activation transfers between
// the GPU groups of adjacent stages.
#pragma once

#include "planner/cluster/devices.h"
#include "planner/cluster/topology.h"
#include "planner/search/planner_mode.h"

namespace harness::planner {

class CostModel {
 public:
  CostModel(Devices devices, Topology topology, PlannerMode mode)
      : devices_(std::move(devices)), topology_(std::move(topology)), mode_(mode) {}

  // Seconds to all-reduce `bytes` over `gpus`. compat: one flat ring at the slowest link (NCCL
  // over Ethernet when the group spans machines, else NVLink with n/2 rings). dapple: groups
  // that span machines use the cheaper of that flat ring and a hierarchical all-reduce
  // (in-machine reduce/broadcast plus a ring across the machines' NICs).
  double all_reduce(const GpuSet& gpus, double bytes) const;
  // Seconds to move `bytes` of activations from the GPUs of one stage to those of the next.
  double transfer(const GpuSet& from, const GpuSet& to, double bytes) const;

  const Devices& devices() const { return devices_; }
  const Topology& topology() const { return topology_; }
  PlannerMode mode() const { return mode_; }

 private:
  double in_machine_all_reduce(int n, double bytes) const;

  Devices devices_;
  Topology topology_;
  PlannerMode mode_;
};

}  // namespace harness::planner
