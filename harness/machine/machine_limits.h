// The machine's limits as one JSON document (`harness machine`): the BLAS the ranks load, fp32
// (and bf16) GEMM GFLOP/s per core and for all cores, triad memory bandwidth, and loopback
// all-reduce bus bandwidth between 2 ranks. Measured once per machine and cached; every run's
// env.json carries them, and MFU is reported against the GEMM figure.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/launch/rank_program.h"

namespace harness {

// Where the cached figures live: $HARNESS_MACHINE_CACHE, else $XDG_CACHE_HOME/harness/
// machine.json, else ~/.cache/harness/machine.json.
std::filesystem::path machine_cache_path();

// What the figures depend on: host, CPU model, cores, the BLAS file and LibTorch version. A
// cache whose key differs is measured again.
nlohmann::json machine_key(RankProgram& rank_program);

// Measures now (about 10 s on 2 cores): `harness-rank machine`, then an all-reduce between
// 2 local ranks (1, 8 and 64 MiB; busbw of the largest).
nlohmann::json measure_machine(RankProgram& rank_program);

// The cached figures when their key matches this machine; else measures and caches them
// (saying so on stderr). `remeasure` ignores the cache.
nlohmann::json machine_limits(RankProgram& rank_program, bool remeasure);

// The cached figures when their key matches this machine; nothing otherwise (measures nothing:
// for --dry-run).
std::optional<nlohmann::json> cached_machine_limits(RankProgram& rank_program);

// The nccl-tests-style table of the figures.
std::string render_machine_limits(const nlohmann::json& limits);

}  // namespace harness
