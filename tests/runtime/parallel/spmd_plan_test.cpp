// A searched SPMD plan as a rank reads it (runtime/parallel/spmd_plan.h): the forms parsed back,
// gradients' forms where none flows, and every malformed plan refused naming its operator.
#include "runtime/parallel/spmd_plan.h"

#include <gtest/gtest.h>

namespace {

using harness::spmd::kPartial;
using harness::spmd::kReplicated;
using harness::spmd::sharded;
using nlohmann::json;

json two_steps() {
  return json::parse(R"({"operators": [
    {"name": "tokens", "kind": "tokens", "signature": "data", "inputs": [], "output": "S0",
     "output_grad": null},
    {"name": "embed_tokens", "kind": "embedding", "signature": "vocab", "output": "P",
     "output_grad": "R", "inputs": [{"from": "tokens", "form": "R", "grad": null}]}]})");
}

std::string refusal(const json& plan) {
  try {
    runtime::read_spmd_steps(plan);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SpmdPlan, ReadsEveryFormAndTheGradientsThatFlow) {
  const auto steps = runtime::read_spmd_steps(two_steps());
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].output, sharded(0));
  EXPECT_FALSE(steps[0].output_grad);
  EXPECT_EQ(steps[0].kind, harness::spmd::OperatorKind::kTokens);
  EXPECT_EQ(steps[1].signature, harness::spmd::SignatureKind::kVocab);
  EXPECT_EQ(steps[1].output, kPartial);
  EXPECT_EQ(steps[1].output_grad, kReplicated);
  ASSERT_EQ(steps[1].inputs.size(), 1u);
  EXPECT_EQ(steps[1].inputs[0].from, "tokens");
  EXPECT_EQ(steps[1].inputs[0].form, kReplicated);
  EXPECT_FALSE(steps[1].inputs[0].grad);
  EXPECT_TRUE(harness::spmd::sums_weight_gradients(steps[0].signature));
  EXPECT_FALSE(harness::spmd::sums_weight_gradients(steps[1].signature));
}

TEST(SpmdPlan, RefusesMalformedPlansNamingTheOperator) {
  EXPECT_EQ(refusal(json::object()), "spmd plan: no 'operators' list");
  json plan = two_steps();
  plan["operators"][1]["inputs"][0]["from"] = "lm_head";
  EXPECT_EQ(refusal(plan),
            "spmd plan operator 'embed_tokens': reads 'lm_head', not an earlier "
            "operator");
  plan = two_steps();
  plan["operators"][1]["output"] = "S";
  EXPECT_EQ(refusal(plan), "spmd plan operator 'embed_tokens': 'output' is no form: 'S'");
  plan = two_steps();
  plan["operators"][1].erase("kind");
  EXPECT_EQ(refusal(plan), "spmd plan operator 'embed_tokens': 'kind' must be a string");
  plan = two_steps();
  plan["operators"][1]["signature"] = "colunm";
  EXPECT_EQ(refusal(plan), "spmd plan operator 'embed_tokens': unknown signature 'colunm'");
  plan = two_steps();
  plan["operators"][0]["kind"] = "token";
  EXPECT_EQ(refusal(plan), "spmd plan operator 'tokens': unknown kind 'token'");
  plan = two_steps();
  plan["operators"][1]["name"] = "tokens";
  EXPECT_EQ(refusal(plan), "spmd plan: operator 'tokens' twice");
}

}  // namespace
