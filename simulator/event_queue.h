// The simulator's clock: a binary heap of timestamped events. Ties are broken by insertion
// order, so a simulation is deterministic whatever the heap implementation does with equal keys.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace harness::simulator {

enum class EventType : std::uint8_t {
  kComputeDone,  // a compute task ends
  kLatencyDone,  // the latency of a transfer or collective step has elapsed
  kFlowDone,     // a flow may have finished (stale when its version changed)
  kTaskDone,     // a task that needs no time (zero bytes) ends
};

struct Event {
  double time = 0.0;
  std::uint64_t sequence = 0;
  EventType type = EventType::kComputeDone;
  std::uint32_t id = 0;       // task or flow
  std::uint32_t version = 0;  // flows: rate changes invalidate earlier completion events
};

class EventQueue {
 public:
  void push(double time, EventType type, std::uint32_t id, std::uint32_t version = 0) {
    heap_.push(Event{time, next_sequence_++, type, id, version});
  }
  bool empty() const { return heap_.empty(); }
  Event pop() {
    Event event = heap_.top();
    heap_.pop();
    return event;
  }
  std::uint64_t pushed() const { return next_sequence_; }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace harness::simulator
