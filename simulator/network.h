// Links and the flows that share them. A flow moves the same number of bytes over each of its
// edges (a point-to-point transfer has one edge; one step of a collective has one edge per
// pair of ranks exchanging data, all advancing in lockstep), so it is described by the links
// its edges cross, with multiplicities. Sharing is equal per edge: a link of bandwidth W
// carrying edges of k flows in total gives each W / k, and a flow advances at the rate of its
// most loaded link (times the use's scale; and never above its own cap). Rates are recomputed, for
// the flows sharing a link with it, whenever a flow starts or finishes.
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/event_queue.h"

namespace harness::simulator {

struct LinkUse {
  int link = 0;
  // How many of the flow's edges cross the link; on a CPU link, the cores its threads want.
  double edges = 1;
  // The flow's rate per unit of the link's share: 1 for a network link (bytes/s of bytes/s);
  // on a machine's CPU link (bandwidth = cores) the bytes/s a transfer or collective edge
  // moves with a whole core, so a communication thread given half a core moves half as fast.
  double scale = 1.0;
};

class Network {
 public:
  Network(std::vector<double> link_bandwidth, EventQueue& queue);

  // Starts a flow of `bytes_per_edge` over `uses` (kept by the caller until the flow ends) at
  // `now`; `rate_cap` <= 0 means none. Schedules its completion (EventType::kFlowDone) and
  // returns its id. `owner` is handed back by finish().
  std::uint32_t start(double now, double bytes_per_edge, const LinkUse* uses, int use_count,
                      double rate_cap, std::uint32_t owner);
  // Handles a kFlowDone event: returns true and the owner when the flow's bytes are done now
  // (the event is current), false for an event made stale by a later rate change. A done flow
  // still holds its links until release() -- or until resume() gives it the bytes of its next
  // step: the steps of one collective phase cross the same links, so keeping them registered
  // through the latency between steps makes a step O(1) instead of O(links) (the price: during
  // that latency other flows still share the links with it).
  bool complete(double now, std::uint32_t flow, std::uint32_t version, std::uint32_t& owner);
  void resume(double now, std::uint32_t flow, double bytes_per_edge);
  void release(double now, std::uint32_t flow);

  int link_count() const { return static_cast<int>(links_.size()); }
  double link_bandwidth(int link) const { return links_[link].bandwidth; }
  int active_flows() const { return active_; }

 private:
  struct Link {
    double bandwidth = 0.0;
    double load = 0;                   // edges of all flows on it
    std::vector<std::uint32_t> flows;  // flows crossing it
  };
  struct Flow {
    const LinkUse* uses = nullptr;
    int use_count = 0;
    double remaining = 0.0;  // bytes per edge
    double rate = 0.0;       // bytes per second per edge
    double updated_at = 0.0;
    double cap = 0.0;
    std::uint32_t version = 0;
    std::uint32_t owner = 0;
    bool active = false;
    bool held = false;  // bytes done, links kept (no completion event pending)
  };

  double fair_rate(const Flow& flow) const;
  // Brings the flow's progress to `now` and reschedules its completion at its new fair rate.
  void update_rate(double now, std::uint32_t id);
  // Recomputes every other flow on the links of `id`, once each.
  void update_neighbours(double now, std::uint32_t id);

  std::vector<Link> links_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint64_t> visit_stamp_;
  std::uint64_t stamp_ = 0;
  int active_ = 0;
  EventQueue& queue_;
};

}  // namespace harness::simulator
