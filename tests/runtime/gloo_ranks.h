// Ranks as threads of one test process, joined by real Gloo over a shared c10d HashStore:
// on_every_rank(world, body) runs body(rank, communicator) on each and returns what each
// threw ("" for none), so a test asserts on results after every rank finished;
// on_every_rank_with_store hands each rank the store instead, for groups of its own.
#pragma once

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/communicator.h"

namespace runtime_test {

// body(rank, store) on a thread per rank over one shared HashStore, for ranks that make their
// own groups (prefixed stores); what each threw ("" for none), once every rank finished.
template <typename Body>
std::vector<std::string> on_every_rank_with_store(int world, Body body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, store);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

template <typename Body>
std::vector<std::string> on_every_rank(int world, Body body) {
  return on_every_rank_with_store(world, [&](int r, const c10::intrusive_ptr<c10d::Store>& store) {
    auto communicator = runtime::make_gloo_communicator(store, r, world, std::chrono::seconds(60));
    body(r, *communicator);
  });
}

}  // namespace runtime_test
