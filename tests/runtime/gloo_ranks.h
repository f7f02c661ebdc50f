// Ranks as threads of one test process, joined by real Gloo over a shared c10d HashStore:
// on_every_rank(world, body) runs body(rank, communicator) on each and returns what each
// threw ("" for none), so a test asserts on results after every rank finished.
#pragma once

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/communicator.h"

namespace runtime_test {

template <typename Body>
std::vector<std::string> on_every_rank(int world, Body body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto communicator =
            runtime::make_gloo_communicator(store, r, world, std::chrono::seconds(60));
        body(r, *communicator);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace runtime_test
