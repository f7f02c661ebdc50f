// The limits the harness enforces on what it is asked to do, so that a typo is an error and
// never an hour of work, a hang or an allocation failure. Documented in experiments/README.md
// ("Limits"); change them here only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace harness {

// Points of one spec's sweep (the product of its axes).
inline constexpr long long kMaxSweepPoints = 10'000;
// Message sizes of one communication profile, and the largest one (bytes).
inline constexpr long long kMaxCommSizes = 64;
inline constexpr int64_t kMaxCommBytes = int64_t{1} << 30;  // 1 GiB
// Idle gaps of one layer profile's after-idle timings (`--after-idle-ms`), and the longest
// one (each is slept once per gap and repetition).
inline constexpr size_t kMaxIdleGaps = 16;
inline constexpr double kMaxIdleGapMs = 1000.0;
// Ranks of one communication profile on this host.
inline constexpr int kMaxCommWorld = 64;
// GPUs (or ranks) of a planned or simulated cluster: devices, topology machines, world size.
inline constexpr int kMaxGpus = 4096;
// Layers of a profile (graph.txt); the published profiles have at most a few hundred.
inline constexpr int kMaxLayers = 10'000;
// A layer's time (ms) or size (bytes) in a profile.
inline constexpr double kMaxProfileValue = 1e15;
// Sequences (or images) of one iteration over all ranks that HiDup's search prices (`harness
// spmd --batch`, a `kind: spmd_search` model's `global_batch`).
inline constexpr int64_t kMaxSearchedBatch = int64_t{1} << 24;
// Threads the planner searches with.
inline constexpr int kMaxPlannerThreads = 256;
// Results folders one side of a comparison may hold (`harness compare`, `harness ab`), and the
// rounds of one `harness ab`.
inline constexpr int kMaxSideFolders = 1000;
inline constexpr int kMaxAbRounds = 500;

// Iterations, warm-up iterations and counts of a run (a spec's, or a manifest's read back),
// and the repeats of one point.
inline constexpr long long kMaxCount = 100'000'000;
inline constexpr long long kMaxRepeats = 10'000;
// Runs of one study (points x systems x repeats), the files of their ranks (x world size), and
// its systems.
inline constexpr long long kMaxRuns = 100'000;
inline constexpr long long kMaxRankRuns = 1'000'000;
inline constexpr size_t kMaxSystems = 1'000;
// Model shape options (`model.depth`, `model.width`; `profile layers --depth/--width`).
inline constexpr long long kMaxModelDepth = 100'000;
inline constexpr long long kMaxModelWidth = 1'000'000;

// A name that names a folder: an experiment's, a system's, a point's id (the file systems the
// harness writes to take 255 bytes a component; the timestamp and suffixes need the rest).
inline constexpr size_t kMaxNameLength = 128;

// Every file the harness reads (specs, topologies, manifests, status, summaries, profiles):
// its size, and for YAML its nesting and its values counted through aliases, so that no
// input is walked without bound (an alias that refers to its own map is refused outright).
inline constexpr long long kMaxInputFileBytes = 64LL << 20;  // 64 MiB
inline constexpr int kMaxYamlDepth = 64;
inline constexpr long long kMaxYamlNodes = 100'000;

// A trace event's time stamp and duration, in microseconds: a clock since the epoch is ~1.8e15
// today; beyond these a span, an idle gap or a sum over events would stop being exact
// (doubles hold integers exactly up to 2^53, ~9e15).
inline constexpr double kMaxTraceTimestampUs = 1e16;
inline constexpr double kMaxTraceDurationUs = 1e13;  // 115 days

}  // namespace harness
