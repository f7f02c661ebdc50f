// A small seeded random stream for the studies (synthetic profiles, profile noise, simulated
// jitter). std::uniform_real_distribution is implementation-defined, so the same seed could give
// other numbers with another standard library; SplitMix64 plus an explicit 53-bit conversion makes
// every draw reproducible everywhere.
#pragma once

#include <cstdint>

namespace harness {

class SeededRandom {
 public:
  explicit SeededRandom(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [low, high).
  double uniform(double low, double high) { return low + (high - low) * uniform(); }

 private:
  std::uint64_t state_;
};

}  // namespace harness
