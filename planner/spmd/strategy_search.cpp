#include "planner/spmd/strategy_search.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace harness::spmd {
namespace {

// One state of a step: the signatures of the frontier's operators (in frontier order), the
// cheapest cost into it, and how it was reached.
struct State {
  std::vector<int> frontier_signatures;
  double seconds = 0;
  int parent = -1;
  int signature = -1;  // the step's operator's
};

struct Step {
  std::vector<int> frontier;  // operators whose outputs are still to be read, ascending
  std::vector<State> states;
};

std::vector<int> frontier_after(const std::vector<int>& before, int op,
                                const std::vector<int>& last_consumer) {
  std::vector<int> after;
  for (int kept : before) {
    if (last_consumer[kept] > op) after.push_back(kept);
  }
  if (last_consumer[op] > op) after.push_back(op);
  return after;
}

int position_in(const std::vector<int>& frontier, int op) {
  return static_cast<int>(std::lower_bound(frontier.begin(), frontier.end(), op) -
                          frontier.begin());
}

// The cost of taking operator `op` under `signature` after `from`: its own term and its
// input edges.
double step_seconds(const OperatorGraph& graph, const SpmdCosts& costs, int op, int signature,
                    const std::vector<int>& frontier, const State& from) {
  const Operator& consumer = graph.operators[op];
  const Signature& chosen = consumer.signatures[signature];
  double seconds = operator_cost(costs, graph.ranks, consumer, chosen).total();
  for (size_t slot = 0; slot < consumer.inputs.size(); ++slot) {
    const int producer = consumer.inputs[slot];
    const int produced = from.frontier_signatures[position_in(frontier, producer)];
    seconds += edge_seconds(costs, graph.ranks, graph.operators[producer],
                            graph.operators[producer].signatures[produced], chosen, slot);
  }
  return seconds;
}

std::vector<int> next_signatures(const Step& before, const std::vector<int>& after, int op,
                                 int signature, const State& from) {
  std::vector<int> kept;
  kept.reserve(after.size());
  for (int alive : after) {
    kept.push_back(alive == op ? signature
                               : from.frontier_signatures[position_in(before.frontier, alive)]);
  }
  return kept;
}

Step advance(const OperatorGraph& graph, const SpmdCosts& costs, const Step& before, int op,
             const std::vector<int>& last_consumer, int64_t max_states) {
  Step next{frontier_after(before.frontier, op, last_consumer), {}};
  std::map<std::vector<int>, int> index;
  const int signatures = static_cast<int>(graph.operators[op].signatures.size());
  for (int parent = 0; parent < static_cast<int>(before.states.size()); ++parent) {
    const State& from = before.states[parent];
    for (int signature = 0; signature < signatures; ++signature) {
      State to{next_signatures(before, next.frontier, op, signature, from),
               from.seconds + step_seconds(graph, costs, op, signature, before.frontier, from),
               parent, signature};
      const auto [where, fresh] =
          index.try_emplace(to.frontier_signatures, static_cast<int>(next.states.size()));
      if (fresh) {
        next.states.push_back(std::move(to));
      } else if (to.seconds < next.states[where->second].seconds) {
        next.states[where->second] = std::move(to);
      }
    }
  }
  if (static_cast<int64_t>(next.states.size()) > max_states) {
    throw std::invalid_argument("the cut after operator '" + graph.operators[op].name + "' keeps " +
                                std::to_string(next.states.size()) + " states, more than " +
                                std::to_string(max_states));
  }
  return next;
}

Strategy walk_back(const std::vector<Step>& steps, int best) {
  Strategy strategy(steps.size() - 1);
  for (size_t step = steps.size() - 1; step > 0; --step) {
    const State& state = steps[step].states[best];
    strategy[step - 1] = state.signature;
    best = state.parent;
  }
  return strategy;
}

}  // namespace

SearchResult search_strategy(const OperatorGraph& graph, const SpmdCosts& costs,
                             int64_t max_states) {
  check_graph(graph);
  const std::vector<int> last_consumer = last_consumers(graph);
  std::vector<Step> steps{Step{{}, {State{}}}};
  SearchResult result;
  for (int op = 0; op < static_cast<int>(graph.operators.size()); ++op) {
    steps.push_back(advance(graph, costs, steps.back(), op, last_consumer, max_states));
    result.states += static_cast<int64_t>(steps.back().states.size());
    result.widest_frontier =
        std::max(result.widest_frontier, static_cast<int>(steps.back().frontier.size()));
  }
  const auto& final_states = steps.back().states;
  const auto best =
      std::min_element(final_states.begin(), final_states.end(),
                       [](const State& a, const State& b) { return a.seconds < b.seconds; });
  result.strategy = walk_back(steps, static_cast<int>(best - final_states.begin()));
  result.seconds = strategy_cost(graph, costs, result.strategy).seconds();
  return result;
}

SearchResult enumerate_strategies(const OperatorGraph& graph, const SpmdCosts& costs,
                                  int64_t max_strategies) {
  check_graph(graph);
  double count = 1;
  for (const Operator& op : graph.operators) count *= static_cast<double>(op.signatures.size());
  if (count > static_cast<double>(max_strategies)) {
    throw std::invalid_argument("enumeration would try " + std::to_string(count) +
                                " strategies, more than " + std::to_string(max_strategies));
  }
  SearchResult best;
  best.seconds = std::numeric_limits<double>::infinity();
  Strategy strategy(graph.operators.size(), 0);
  while (true) {
    const double seconds = strategy_cost(graph, costs, strategy).seconds();
    ++best.states;
    if (seconds < best.seconds) best = {strategy, seconds, best.states, 0};
    size_t digit = 0;
    while (digit < strategy.size() &&
           ++strategy[digit] == static_cast<int>(graph.operators[digit].signatures.size())) {
      strategy[digit++] = 0;
    }
    if (digit == strategy.size()) break;
  }
  return best;
}

}  // namespace harness::spmd
