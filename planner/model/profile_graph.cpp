#include "planner/model/profile_graph.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/limits.h"
#include "common/text_util.h"

namespace harness::planner {
namespace {

constexpr const char* kSeparator = " -- ";

[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
  throw InputError(source + ":" + std::to_string(line) + ": " + what);
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::vector<std::string> split_on(const std::string& s, const std::string& separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(separator, start);
    if (pos == std::string::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + separator.size();
  }
}

double parse_number(const std::string& raw, const std::string& key, const std::string& source,
                    int line) {
  const std::string text = trim(raw);
  if (text.empty()) fail(source, line, "missing value for '" + key + "'");
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE) {
    fail(source, line, "invalid number '" + text + "' for '" + key + "'");
  }
  // strtod takes "nan" and "inf": a time or size that is not finite would give a table of nan
  // and a chosen plan.
  if (!std::isfinite(value)) fail(source, line, "'" + key + "' is not finite: " + text);
  if (value < 0) fail(source, line, "negative value " + text + " for '" + key + "'");
  // A layer's milliseconds or bytes beyond 1e15 (31,000 years, a petabyte) is no profile: the
  // planner's sums and products over 10,000 layers must stay far from overflow.
  if (value > kMaxProfileValue) {
    fail(source, line,
         "'" + key + "' is " + text + ", more than " + format_general(kMaxProfileValue));
  }
  return value;
}

// "[x; y; z]" sums to x+y+z: a layer with several outputs keeps all of them alive.
double parse_activation(const std::string& raw, const std::string& source, int line) {
  const std::string text = trim(raw);
  if (text.empty() || text.front() != '[')
    return parse_number(text, "activation_size", source, line);
  if (text.back() != ']')
    fail(source, line, "unterminated list '" + text + "' for 'activation_size'");
  double total = 0.0;
  for (const auto& item : split_on(text.substr(1, text.size() - 2), ";")) {
    total += parse_number(item, "activation_size", source, line);
  }
  return total;
}

LayerNode parse_node_line(const std::string& line_text, const std::string& source, int line) {
  std::vector<std::string> fields = split_on(line_text, kSeparator);
  if (fields.size() < 3) {
    fail(source, line, "expected '<id> -- <description> -- <metadata>'");
  }
  LayerNode node;
  node.line = line;
  node.id = trim(fields.front());
  if (node.id.empty()) fail(source, line, "empty node id");
  if (trim(fields.back()).rfind("stage_id", 0) == 0) {
    const auto kv = split_on(trim(fields.back()), "=");
    if (kv.size() != 2) fail(source, line, "expected 'stage_id=<n>'");
    node.stage_id = static_cast<int>(parse_number(kv[1], "stage_id", source, line));
    fields.pop_back();
    if (fields.size() < 3) fail(source, line, "expected '<id> -- <description> -- <metadata>'");
  }
  // A description may itself contain " -- "; the metadata is always the last field.
  for (std::size_t i = 1; i + 1 < fields.size(); ++i) {
    if (i > 1) node.description += kSeparator;
    node.description += fields[i];
  }
  node.description = trim(node.description);

  bool seen[4] = {false, false, false, false};
  static const char* kKeys[4] = {"forward_compute_time", "backward_compute_time", "activation_size",
                                 "parameter_size"};
  for (const auto& item : split_on(fields.back(), ",")) {
    const std::string entry = trim(item);
    if (entry.empty()) continue;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) fail(source, line, "expected 'key=value', got '" + entry + "'");
    const std::string key = trim(entry.substr(0, eq));
    const std::string value = entry.substr(eq + 1);
    int index = -1;
    for (int k = 0; k < 4; ++k) {
      if (key == kKeys[k]) index = k;
    }
    if (index < 0) fail(source, line, "unknown key '" + key + "'");
    if (seen[index]) fail(source, line, "duplicate key '" + key + "'");
    seen[index] = true;
    switch (index) {
      case 0:
        node.forward_ms = parse_number(value, key, source, line);
        break;
      case 1:
        node.backward_ms = parse_number(value, key, source, line);
        break;
      case 2:
        node.activation_bytes = parse_activation(value, source, line);
        break;
      default:
        node.parameter_bytes = parse_number(value, key, source, line);
        break;
    }
  }
  for (int k = 0; k < 4; ++k) {
    if (!seen[k]) fail(source, line, std::string("missing '") + kKeys[k] + "'");
  }
  return node;
}

struct PendingEdge {
  std::string from, to;
  int line;
};

// Every layer reachable from the first along edges either way: a layer on its own (or a second
// graph beside the first) would be planned as part of a stage it shares no tensor with.
void refuse_disconnected(const LayerGraph& graph, const std::string& source) {
  std::vector<bool> reached(graph.nodes.size(), false);
  std::vector<int> pending{0};
  reached[0] = true;
  while (!pending.empty()) {
    const int node = pending.back();
    pending.pop_back();
    for (const auto* neighbours : {&graph.successors[node], &graph.predecessors[node]}) {
      for (const int next : *neighbours) {
        if (!reached[next]) {
          reached[next] = true;
          pending.push_back(next);
        }
      }
    }
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (reached[i]) continue;
    fail(source, graph.nodes[i].line,
         "layer '" + graph.nodes[i].id + "' is not connected to layer '" + graph.nodes[0].id +
             "' (every layer needs a path of edges to the others)");
  }
}

}  // namespace

LayerGraph parse_layer_graph(const std::string& text, const std::string& source) {
  LayerGraph graph;
  graph.source = source;
  std::unordered_map<std::string, int> index_of;
  std::vector<PendingEdge> edges;

  std::istringstream in(text);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();  // CRLF files
    if (trim(raw).empty()) continue;
    if (raw.front() == ' ' || raw.front() == '\t') {
      // Edge lines are indented (tab, or space+tab in some published files).
      const auto parts = split_on(trim(raw), kSeparator);
      if (parts.size() != 2 || trim(parts[0]).empty() || trim(parts[1]).empty()) {
        fail(source, line, "expected edge '<src_id> -- <dst_id>'");
      }
      edges.push_back({trim(parts[0]), trim(parts[1]), line});
      continue;
    }
    LayerNode node = parse_node_line(raw, source, line);
    if (index_of.count(node.id)) {
      fail(source, line,
           "duplicate node id '" + node.id + "' (first at line " +
               std::to_string(graph.nodes[index_of[node.id]].line) + ")");
    }
    index_of.emplace(node.id, graph.size());
    graph.nodes.push_back(std::move(node));
    if (graph.size() > kMaxLayers) {
      fail(source, line, "more than " + std::to_string(kMaxLayers) + " layers");
    }
  }
  if (graph.nodes.empty()) fail(source, std::max(line, 1), "profile has no layers");
  // Layers without edges would be taken as one stage of unrelated layers.
  if (graph.nodes.size() > 1 && edges.empty()) {
    fail(source, line,
         std::to_string(graph.nodes.size()) +
             " layers but no edges (edge lines: '\t<src_id> -- <dst_id>')");
  }

  graph.successors.assign(graph.nodes.size(), {});
  graph.predecessors.assign(graph.nodes.size(), {});
  for (const auto& edge : edges) {
    const auto from = index_of.find(edge.from);
    if (from == index_of.end())
      fail(source, edge.line, "edge refers to unknown node '" + edge.from + "'");
    const auto to = index_of.find(edge.to);
    if (to == index_of.end())
      fail(source, edge.line, "edge refers to unknown node '" + edge.to + "'");
    if (from->second == to->second)
      fail(source, edge.line, "self-loop on node '" + edge.from + "'");
    auto& out = graph.successors[from->second];
    if (std::find(out.begin(), out.end(), to->second) != out.end()) continue;  // repeated edge
    out.push_back(to->second);
    graph.predecessors[to->second].push_back(from->second);
  }
  refuse_disconnected(graph, source);
  topological_order(graph);  // rejects cycles with a located message
  return graph;
}

LayerGraph read_layer_graph(const std::string& path) {
  // Regular files only, and a bounded read (common/atomic_file.h).
  const std::optional<std::string> text = read_input_file(path);
  if (!text) throw InputError(path + ": cannot open profile");
  return parse_layer_graph(*text, path);
}

LayerGraph prune_inputs_and_getitem_sinks(const LayerGraph& graph) {
  std::vector<bool> keep(graph.nodes.size(), true);
  for (int v = 0; v < graph.size(); ++v) {
    if (graph.predecessors[v].empty() && graph.nodes[v].description.rfind("Input", 0) == 0) {
      keep[v] = false;
    }
  }
  // Sinks are judged after the inputs are gone, as the published planner does.
  for (int v = 0; v < graph.size(); ++v) {
    if (!keep[v]) continue;
    const bool is_sink = std::none_of(graph.successors[v].begin(), graph.successors[v].end(),
                                      [&](int w) { return keep[w]; });
    if (is_sink && graph.nodes[v].description.rfind("__getitem__", 0) == 0) keep[v] = false;
  }
  LayerGraph pruned;
  pruned.source = graph.source;
  std::vector<int> new_index(graph.nodes.size(), -1);
  for (int v = 0; v < graph.size(); ++v) {
    if (!keep[v]) continue;
    new_index[v] = pruned.size();
    pruned.nodes.push_back(graph.nodes[v]);
  }
  if (pruned.nodes.empty()) {
    fail(graph.source, 1, "profile has no layers besides inputs");
  }
  pruned.successors.assign(pruned.nodes.size(), {});
  pruned.predecessors.assign(pruned.nodes.size(), {});
  for (int v = 0; v < graph.size(); ++v) {
    if (!keep[v]) continue;
    for (int w : graph.successors[v]) {
      if (!keep[w]) continue;
      pruned.successors[new_index[v]].push_back(new_index[w]);
      pruned.predecessors[new_index[w]].push_back(new_index[v]);
    }
  }
  return pruned;
}

std::vector<int> topological_order(const LayerGraph& graph) {
  std::vector<int> in_degree(graph.nodes.size(), 0);
  for (const auto& out : graph.successors) {
    for (int w : out) ++in_degree[w];
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int v = 0; v < graph.size(); ++v) {
    if (in_degree[v] == 0) ready.push(v);
  }
  std::vector<int> order;
  order.reserve(graph.nodes.size());
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int w : graph.successors[v]) {
      if (--in_degree[w] == 0) ready.push(w);
    }
  }
  if (static_cast<int>(order.size()) != graph.size()) {
    for (int v = 0; v < graph.size(); ++v) {
      if (in_degree[v] > 0) {
        fail(graph.source, graph.nodes[v].line,
             "graph has a cycle through node '" + graph.nodes[v].id + "'");
      }
    }
  }
  return order;
}

}  // namespace harness::planner
