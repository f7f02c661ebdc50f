// What an emulated cluster's links deliver, measured before a study's runs (issue 21): for
// every distinct cluster its points ask for, the machines are built once, send/recv and
// all-reduce are timed across them (and send/recv within machine 0 when machines hold several
// ranks), a ping-pong times the one-way latency, and a planner topology is written from the
// measurement. `plan: auto` on such a point plans with that topology; env.json records each
// link as configured and as measured.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "harness/emulation/network_plan.h"
#include "harness/launch/rank_program.h"
#include "harness/profile/comm_profile.h"
#include "harness/study/planned_run.h"

namespace harness {

struct ProbedLink {
  EmulatedClusterShape shape;
  MeasuredLink measured;
  std::filesystem::path topology;  // links/<n>/topology.yaml
};

struct ProbedLinks {
  std::vector<ProbedLink> links;
  std::map<const Point*, size_t> of_point;  // index into links, for emulated points only

  const ProbedLink* find(const Point& point) const;
  // env.json's "emulated_links": each link configured and measured, with its points' labels
  // and its topology's path relative to the study's `directory`.
  nlohmann::json to_json(const std::filesystem::path& directory) const;
};

// The emulated cluster a point asks for (cluster.machines > 1), as a network shape.
std::optional<EmulatedClusterShape> emulated_cluster_of(const Point& point);

// Probes each distinct cluster of `experiment`'s points into `directory`/links/<n>/, but for
// the points whose `cluster.network.probe` is false (their runs see the links unmeasured). Throws
// std::runtime_error when a measurement fails (said on stderr) or the machines cannot be built.
ProbedLinks probe_emulated_links(const Experiment& experiment,
                                 const std::filesystem::path& directory, RankProgram& rank_program,
                                 std::ostream& log);

}  // namespace harness
