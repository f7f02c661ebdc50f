// The limits the harness enforces on what it is asked to do, so that a typo is an error and
// never an hour of work, a hang or an allocation failure. Documented in experiments/README.md
// ("Limits"); change them here only.
#pragma once

#include <cstdint>

namespace harness {

// Points of one spec's sweep (the product of its axes).
inline constexpr long long kMaxSweepPoints = 10'000;
// Message sizes of one communication profile, and the largest one (bytes).
inline constexpr long long kMaxCommSizes = 64;
inline constexpr int64_t kMaxCommBytes = int64_t{1} << 30;  // 1 GiB
// Ranks of one communication profile on this host.
inline constexpr int kMaxCommWorld = 64;
// GPUs (or ranks) of a planned or simulated cluster: devices, topology machines, world size.
inline constexpr int kMaxGpus = 4096;
// Layers of a profile (graph.txt); the published profiles have at most a few hundred.
inline constexpr int kMaxLayers = 10'000;
// Threads the planner searches with.
inline constexpr int kMaxPlannerThreads = 256;
// Results folders one side of a comparison may hold (`harness compare`, `harness ab`), and the
// rounds of one `harness ab`.
inline constexpr int kMaxSideFolders = 1000;
inline constexpr int kMaxAbRounds = 500;

}  // namespace harness
