#include "planner/model/antichain_dag.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>

namespace harness::planner {
namespace {

struct Closures {
  std::vector<NodeSet> predecessors;  // transitive, excluding the node itself
  std::vector<NodeSet> successors;
};

Closures transitive_closures(const LayerGraph& graph) {
  const int n = graph.size();
  Closures c{std::vector<NodeSet>(n, NodeSet(n)), std::vector<NodeSet>(n, NodeSet(n))};
  const std::vector<int> order = topological_order(graph);
  for (int v : order) {
    for (int p : graph.predecessors[v]) {
      c.predecessors[v].insert(p);
      c.predecessors[v].unite(c.predecessors[p]);
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (int s : graph.successors[*it]) {
      c.successors[*it].insert(s);
      c.successors[*it].unite(c.successors[s]);
    }
  }
  return c;
}

class Builder {
 public:
  explicit Builder(const LayerGraph& graph)
      : graph_(graph), closures_(transitive_closures(graph)) {}

  // A predecessor p of an antichain node a stays "live" (joins the augmented antichain) when p
  // also feeds a node outside a's own history: its output is still needed after the cut.
  std::vector<int> augment(const std::vector<int>& antichain) const {
    NodeSet extra(graph_.size());
    for (int a : antichain) {
      const NodeSet& history = closures_.predecessors[a];
      for (int p : history.members()) {
        for (int w : graph_.successors[p]) {
          if (w != a && !history.contains(w)) {
            extra.insert(p);
            break;
          }
        }
      }
    }
    std::vector<int> augmented = extra.members();
    augmented.insert(augmented.end(), antichain.begin(), antichain.end());
    return augmented;
  }

  // Drops the members that precede another member, leaving the frontier of the set.
  std::vector<int> deaugment(const std::vector<int>& augmented) const {
    NodeSet present(graph_.size());
    for (int v : augmented) present.insert(v);
    std::vector<int> antichain;
    for (int v : augmented) {
      if (!closures_.successors[v].intersects(present)) antichain.push_back(v);
    }
    return antichain;
  }

  std::vector<std::vector<int>> next_antichains(const std::vector<int>& antichain,
                                                const std::vector<int>& augmented) const {
    NodeSet in_antichain(graph_.size()), in_augmented(graph_.size());
    for (int v : antichain) in_antichain.insert(v);
    for (int v : augmented) in_augmented.insert(v);
    std::vector<std::vector<int>> next;
    for (int u : augmented) {
      for (int v : graph_.successors[u]) {
        if (in_antichain.contains(v)) continue;
        // v can join only if nothing after it is already part of the cut.
        if (closures_.successors[v].intersects(in_augmented)) continue;
        std::vector<int> replaced = augmented;
        std::replace(replaced.begin(), replaced.end(), u, v);
        next.push_back(deaugment(replaced));
      }
    }
    return next;
  }

  AntichainDag build() const {
    const std::vector<RawState> raw = discover();
    const std::vector<int> position = published_positions(raw);
    const int count = static_cast<int>(raw.size());
    AntichainDag dag;
    dag.states.resize(count);
    for (int s = 0; s < count; ++s) {
      AntichainState& state = dag.states[position[s]];
      state.antichain = raw[s].antichain;
      state.augmented_antichain = raw[s].augmented;
      state.downset = NodeSet(graph_.size());
      for (int v : raw[s].augmented) {
        state.downset.insert(v);
        state.downset.unite(closures_.predecessors[v]);
      }
      for (int t : raw[s].successors) state.successors.push_back(position[t]);
      std::sort(state.successors.begin(), state.successors.end());
    }
    std::vector<NodeSet> ancestors(count, NodeSet(count));
    for (int s = 0; s < count; ++s) {
      for (int t : dag.states[s].successors) {
        ancestors[t].insert(s);
        ancestors[t].unite(ancestors[s]);
      }
    }
    dag.ancestors.reserve(count);
    for (const auto& a : ancestors) dag.ancestors.push_back(a.members());
    return dag;
  }

 private:
  // A state as discovered: its antichain, augmented antichain and successors, by discovery index.
  struct RawState {
    std::vector<int> antichain, augmented;
    std::vector<int> successors;
  };

  // Every antichain reachable from the first source, breadth first, each once.
  std::vector<RawState> discover() const {
    std::vector<RawState> raw;
    std::map<std::vector<int>, int> id_of;
    auto key_of = [](std::vector<int> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    int first_source = 0;
    while (!graph_.predecessors[first_source].empty()) ++first_source;

    std::deque<int> queue;
    raw.push_back({{first_source}, augment({first_source}), {}});
    id_of.emplace(key_of({first_source}), 0);
    queue.push_back(0);
    while (!queue.empty()) {
      const int current = queue.front();
      queue.pop_front();
      for (auto& next : next_antichains(raw[current].antichain, raw[current].augmented)) {
        auto key = key_of(next);
        auto found = id_of.find(key);
        int id;
        if (found == id_of.end()) {
          id = static_cast<int>(raw.size());
          id_of.emplace(std::move(key), id);
          std::vector<int> augmented = augment(next);
          raw.push_back({std::move(next), std::move(augmented), {}});
          queue.push_back(id);
        } else {
          id = found->second;
        }
        auto& out = raw[current].successors;
        if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
      }
    }
    return raw;
  }

  // Each discovered state's position in PipeDream's numbering (Graph.topological_sort over the
  // antichain DAG: the published planner's state order, which the states' individual totals --
  // differences of the cumulative row -- follow where the DAG branches). A state is described
  // by the first node of its antichain; every state, in description order (stable: discovery
  // order among equals), starts a depth-first walk that visits successors in description
  // order; a state is placed in front when its walk finishes (reverse postorder).
  std::vector<int> published_positions(const std::vector<RawState>& raw) const {
    const int count = static_cast<int>(raw.size());
    const auto description = [&](int state) -> const std::string& {
      return graph_.nodes[raw[state].antichain.front()].description;
    };
    const auto by_description = [&](std::vector<int> states) {
      std::stable_sort(states.begin(), states.end(),
                       [&](int a, int b) { return description(a) < description(b); });
      return states;
    };
    std::vector<std::vector<int>> children(count);
    for (int state = 0; state < count; ++state)
      children[state] = by_description(raw[state].successors);
    std::vector<int> roots(count);
    std::iota(roots.begin(), roots.end(), 0);
    roots = by_description(roots);
    std::vector<int> finished;
    std::vector<char> marked(count, 0);
    for (int root : roots) {
      if (marked[root]) continue;
      std::vector<std::pair<int, std::size_t>> stack{{root, 0}};
      marked[root] = 1;
      while (!stack.empty()) {
        auto& [state, next_child] = stack.back();
        if (next_child < children[state].size()) {
          const int child = children[state][next_child++];
          if (!marked[child]) {
            marked[child] = 1;
            stack.emplace_back(child, 0);
          }
          continue;
        }
        finished.push_back(state);
        stack.pop_back();
      }
    }
    std::vector<int> position(count, -1);
    for (int i = 0; i < count; ++i) position[finished[count - 1 - i]] = i;
    return position;
  }

  const LayerGraph& graph_;
  Closures closures_;
};

}  // namespace

AntichainDag build_antichain_dag(const LayerGraph& graph) { return Builder(graph).build(); }

}  // namespace harness::planner
