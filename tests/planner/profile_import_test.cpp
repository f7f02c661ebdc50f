// Profile parsing, pruning and the antichain construction on small hand-written profiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "planner/model/model_profile.h"
#include "tests/planner/planner_test_data.h"

namespace harness::planner {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_layer_graph(text, "bad.txt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

void expect_all_near(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-12 * std::max(1.0, expected[i])) << "index " << i;
  }
}

const std::string kNode1 =
    "node1 -- A -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=3.0, "
    "parameter_size=4.0\n";

TEST(ProfileImport, ThreeLayerChainHasOneStatePerLayer) {
  const ModelProfile p = import_profile(kData + "/three_layers.txt");
  ASSERT_EQ(p.num_states(), 3);  // the Input source is dropped
  EXPECT_EQ(p.graph.nodes[0].description, "LayerA");
  EXPECT_NEAR(p.compute_s.at(0, 0), 0.030, 1e-12);
  EXPECT_NEAR(p.compute_s.at(0, 2), 0.100, 1e-12);
  EXPECT_NEAR(p.compute_s.at(2, 2), 0.100 - 0.090, 1e-12);
  EXPECT_NEAR(p.compute_s.at(1, 2), 0.100 - 0.030, 1e-12);
  EXPECT_DOUBLE_EQ(p.parameter_bytes.at(0, 1), 90e6);
  EXPECT_DOUBLE_EQ(p.parameter_bytes.total(), 105e6);
  EXPECT_DOUBLE_EQ(p.activation_bytes.total(), 4e6);  // the list [5e5; 5e5] sums
  EXPECT_EQ(p.output_activation_bytes, (std::vector<double>{1e6, 2e6, 1e6}));
  EXPECT_EQ(p.ancestors(2), (std::vector<int>{0, 1}));
  // (L+1) x L with the -1 sentinel below the diagonal and past the last row.
  EXPECT_EQ(p.compute_s.rows(), 4);
  EXPECT_EQ(p.compute_s.at(2, 1), CumulativeMatrix::kNoValue);
  EXPECT_EQ(p.compute_s.at(3, 2), CumulativeMatrix::kNoValue);
}

TEST(ProfileImport, BranchingCrlfProfileWithAllFileVariants) {
  // CRLF, space+tab indents, a trailing space, spaces before commas, list activations,
  // stage_id, and a __getitem__ sink.
  const ModelProfile p = import_profile(kData + "/diamond_crlf.txt");
  ASSERT_EQ(p.graph.size(), 4);  // Input and __getitem__ dropped
  EXPECT_EQ(p.graph.nodes[0].stage_id, 0);
  EXPECT_EQ(p.graph.nodes[3].stage_id, 1);
  ASSERT_EQ(p.num_states(), 5);  // {split} {left} {right} {left,right} {join}
  // PipeDream's order (the published planner's): a state is described by its antichain's first
  // node -- split, left, right, right ({right,left}, found from {left}), join -- and depth-first
  // walks start from the states in description order (join, left, right, right, split), visit
  // successors in description order and place a state in front when its walk ends. join ends
  // first; left's walk visits join (done) then {right,left}; then right's, then split's:
  // split, right, left, {right,left}, join. (Breadth first would put left before right.)
  expect_all_near(p.compute_s.cumulative(), {0.003, 0.012, 0.009, 0.018, 0.030});
  EXPECT_EQ(p.parameter_bytes.cumulative(), (std::vector<double>{5, 16, 12, 23, 36}));
  EXPECT_EQ(p.activation_bytes.cumulative(), (std::vector<double>{300, 700, 600, 1000, 1500}));
  // The split stays live while either branch is pending: it joins the augmented antichains.
  EXPECT_EQ(p.output_activation_bytes, (std::vector<double>{300, 700, 600, 1000, 500}));
  EXPECT_EQ(p.ancestors(4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(p.ancestors(3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(p.ancestors(2), (std::vector<int>{0}));
  EXPECT_EQ(p.ancestors(1), (std::vector<int>{0}));
  EXPECT_EQ(p.layers_of_stage(3, 4), (std::vector<int>{2, 3}));  // right and join
}

TEST(ProfileImport, MalformedInputsNameFileAndLine) {
  EXPECT_EQ(parse_error("node1 -- A -- forward_compute_time=1.0, backward_compute_time=2.0, "
                        "activation_size=3.0\n"),
            "bad.txt:1: missing 'parameter_size'");
  EXPECT_EQ(
      parse_error(kNode1 + "node2 -- B -- forward_compute_time=abc, backward_compute_time=2.0, "
                           "activation_size=3.0, parameter_size=4.0\n"),
      "bad.txt:2: invalid number 'abc' for 'forward_compute_time'");
  EXPECT_EQ(parse_error(kNode1 + "\tnode1 -- node9\n"),
            "bad.txt:2: edge refers to unknown node 'node9'");
  EXPECT_EQ(parse_error(kNode1 + "\tnode1\n"), "bad.txt:2: expected edge '<src_id> -- <dst_id>'");
  EXPECT_EQ(parse_error(kNode1 + kNode1), "bad.txt:2: duplicate node id 'node1' (first at line 1)");
  EXPECT_EQ(parse_error("node1 -- A\n"),
            "bad.txt:1: expected '<id> -- <description> -- <metadata>'");
  EXPECT_EQ(parse_error("node1 -- A -- forward_compute_time 1.0\n"),
            "bad.txt:1: expected 'key=value', got 'forward_compute_time 1.0'");
  EXPECT_EQ(parse_error("node1 -- A -- forward_compute_time=1, backward_compute_time=2.0, "
                        "activation_size=[1; 2, parameter_size=4.0\n"),
            "bad.txt:1: unterminated list '[1; 2' for 'activation_size'");
  EXPECT_EQ(
      parse_error(kNode1 + "node2 -- B -- forward_compute_time=1.0, backward_compute_time=2.0, "
                           "activation_size=3.0, parameter_size=4.0\n\tnode1 -- node2\n"
                           "\tnode2 -- node1\n"),
      "bad.txt:1: graph has a cycle through node 'node1'");
  EXPECT_EQ(parse_error("\n\n"), "bad.txt:2: profile has no layers");
  // Not finite, no edges, too many layers (common/limits.h): errors, not a nan table, one
  // stage of unrelated layers, or minutes of search and an allocation failure.
  EXPECT_EQ(
      parse_error(kNode1 + "node2 -- B -- forward_compute_time=nan, backward_compute_time=2.0, "
                           "activation_size=3.0, parameter_size=4.0\n"),
      "bad.txt:2: 'forward_compute_time' is not finite: nan");
  EXPECT_EQ(parse_error(kNode1 + "node2 -- B -- forward_compute_time=1, backward_compute_time=inf, "
                                 "activation_size=3.0, parameter_size=4.0\n"),
            "bad.txt:2: 'backward_compute_time' is not finite: inf");
  EXPECT_EQ(
      parse_error(kNode1 + "node2 -- B -- forward_compute_time=1.0, backward_compute_time=2.0, "
                           "activation_size=3.0, parameter_size=4.0\n"),
      "bad.txt:2: 2 layers but no edges (edge lines: '\t<src_id> -- <dst_id>')");
  // Finite but beyond any layer (1e15 ms or bytes), and a layer no edge reaches: refused, not
  // planned.
  EXPECT_EQ(
      parse_error(kNode1 + "node2 -- B -- forward_compute_time=1e300, backward_compute_time=2.0, "
                           "activation_size=3.0, parameter_size=4.0\n\tnode1 -- node2\n"),
      "bad.txt:2: 'forward_compute_time' is 1e300, more than 1e+15");
  const std::string node =
      " -- L -- forward_compute_time=1, backward_compute_time=1, "
      "activation_size=1, parameter_size=1\n";
  EXPECT_EQ(parse_error("a" + node + "b" + node + "c" + node + "\ta -- b\n"),
            "bad.txt:3: layer 'c' is not connected to layer 'a' (every layer needs a path of "
            "edges to the others)");
  EXPECT_EQ(parse_error("a" + node + "b" + node + "c" + node + "d" + node + "\ta -- b\n\tc -- d\n"),
            "bad.txt:3: layer 'c' is not connected to layer 'a' (every layer needs a path of "
            "edges to the others)");
  std::string chain;
  for (int i = 0; i <= 10'000; ++i) {
    chain += "n" + std::to_string(i) +
             " -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=1, "
             "parameter_size=1\n";
  }
  EXPECT_EQ(parse_error(chain), "bad.txt:10001: more than 10000 layers");
}

TEST(ProfileImport, MissingFileIsAnInputError) {
  EXPECT_THROW(import_profile(kData + "/no_such_profile.txt"), InputError);
}

}  // namespace
}  // namespace harness::planner
