#include "simulator/network.h"

#include <algorithm>
#include <limits>

namespace harness::simulator {

Network::Network(std::vector<double> link_bandwidth, EventQueue& queue) : queue_(queue) {
  links_.resize(link_bandwidth.size());
  for (size_t i = 0; i < links_.size(); ++i) links_[i].bandwidth = link_bandwidth[i];
}

double Network::fair_rate(const Flow& flow) const {
  double rate = flow.cap > 0 ? flow.cap : std::numeric_limits<double>::infinity();
  for (int i = 0; i < flow.use_count; ++i) {
    const Link& link = links_[flow.uses[i].link];
    rate = std::min(rate, link.bandwidth / link.load * flow.uses[i].scale);
  }
  return rate;
}

void Network::update_rate(double now, std::uint32_t id) {
  Flow& flow = flows_[id];
  const double rate = fair_rate(flow);
  if (rate == flow.rate) return;  // its completion event is still right
  if (flow.held) {                // nothing to move now: remember the rate for resume()
    flow.rate = rate;
    return;
  }
  flow.remaining = std::max(0.0, flow.remaining - flow.rate * (now - flow.updated_at));
  flow.updated_at = now;
  flow.rate = rate;
  ++flow.version;
  queue_.push(now + flow.remaining / rate, EventType::kFlowDone, id, flow.version);
}

void Network::update_neighbours(double now, std::uint32_t id) {
  ++stamp_;
  visit_stamp_[id] = stamp_;
  const Flow& flow = flows_[id];
  for (int i = 0; i < flow.use_count; ++i) {
    for (std::uint32_t other : links_[flow.uses[i].link].flows) {
      if (visit_stamp_[other] == stamp_) continue;
      visit_stamp_[other] = stamp_;
      update_rate(now, other);
    }
  }
}

std::uint32_t Network::start(double now, double bytes_per_edge, const LinkUse* uses, int use_count,
                             double rate_cap, std::uint32_t owner) {
  std::uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
    visit_stamp_.push_back(0);
  }
  Flow& flow = flows_[id];
  const std::uint32_t version = flow.version + 1;
  flow = Flow{uses, use_count, bytes_per_edge, 0.0, now, rate_cap, version, owner, true, false};
  for (int i = 0; i < use_count; ++i) {
    Link& link = links_[uses[i].link];
    link.load += uses[i].edges;
    link.flows.push_back(id);
  }
  ++active_;
  flow.rate = fair_rate(flow);
  queue_.push(now + bytes_per_edge / flow.rate, EventType::kFlowDone, id, flow.version);
  update_neighbours(now, id);
  return id;
}

bool Network::complete(double now, std::uint32_t id, std::uint32_t version, std::uint32_t& owner) {
  Flow& flow = flows_[id];
  if (!flow.active || flow.held || flow.version != version) return false;
  flow.held = true;
  flow.remaining = 0.0;
  flow.updated_at = now;
  owner = flow.owner;
  return true;
}

void Network::resume(double now, std::uint32_t id, double bytes_per_edge) {
  Flow& flow = flows_[id];
  flow.held = false;
  flow.remaining = bytes_per_edge;
  flow.updated_at = now;
  ++flow.version;  // the rate is current: update_rate kept it while the flow was held
  queue_.push(now + bytes_per_edge / flow.rate, EventType::kFlowDone, id, flow.version);
}

void Network::release(double now, std::uint32_t id) {
  Flow& flow = flows_[id];
  flow.active = false;
  flow.held = false;
  for (int i = 0; i < flow.use_count; ++i) {
    Link& link = links_[flow.uses[i].link];
    link.load -= flow.uses[i].edges;
    auto it = std::find(link.flows.begin(), link.flows.end(), id);
    *it = link.flows.back();
    link.flows.pop_back();
  }
  --active_;
  // Neighbours speed up now that this flow's edges left their links.
  ++stamp_;
  visit_stamp_[id] = stamp_;
  for (int i = 0; i < flow.use_count; ++i) {
    for (std::uint32_t other : links_[flow.uses[i].link].flows) {
      if (visit_stamp_[other] == stamp_) continue;
      visit_stamp_[other] = stamp_;
      update_rate(now, other);
    }
  }
  free_.push_back(id);
}

}  // namespace harness::simulator
