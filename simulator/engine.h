// Runs a task graph on a cluster, event by event, and records when every task started and
// ended. Compute tasks take their seconds (on a machine whose CPU ranks outnumber its cores, a
// fair share of them: ClusterConfig::cpu_cores_per_machine; the first forward and backward after
// its rank idled, longer by their curve: simulator/compute_after_idle.h); a transfer waits its link
// latency, then is one flow on its route; a collective runs its phases' steps one after another,
// each a latency wait and then one flow over all of its edges (simulator/collective.h). Flows share
// links (simulator/network.h), so concurrent transfers and collectives slow each other down.
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/task_graph.h"

namespace harness::simulator {

struct TaskTimes {
  std::vector<double> start;  // seconds from the iteration start; every rank starts at 0
  std::vector<double> end;
  std::uint64_t events = 0;  // events processed (the cost measure of a simulation)
  double makespan = 0.0;     // last end
};

// Throws std::logic_error when the graph cannot finish (a dependency cycle, or resource
// orders that wait on each other), naming a task that never started.
TaskTimes run_tasks(const Cluster& cluster, const TaskGraph& graph);

}  // namespace harness::simulator
