// Tensor forms (common/tensor_form.h): the collective that changes one into another, the bytes
// it hands over, and the text a plan carries them in.
#include "common/tensor_form.h"

#include <gtest/gtest.h>

namespace harness::spmd {
namespace {

TEST(TensorForm, ReshardingIsTheCollectiveThatChangesTheForm) {
  const TensorForm s0 = sharded(0), s2 = sharded(2);
  EXPECT_EQ(resharding(s0, kReplicated), Collective::kAllGather);
  EXPECT_EQ(resharding(kPartial, kReplicated), Collective::kAllReduce);
  EXPECT_EQ(resharding(kPartial, s2), Collective::kReduceScatter);
  EXPECT_EQ(resharding(s0, s2), Collective::kAllToAll);
  EXPECT_EQ(resharding(kReplicated, s2), Collective::kNone);
  EXPECT_EQ(resharding(kReplicated, kPartial), Collective::kNone);
  EXPECT_EQ(resharding(s0, kPartial), Collective::kNone);
  EXPECT_EQ(resharding(s2, s2), Collective::kNone);
  // An all-to-all hands over one rank's shard; the others the whole tensor.
  EXPECT_DOUBLE_EQ(collective_buffer_bytes(Collective::kAllToAll, 800, 4), 200);
  EXPECT_DOUBLE_EQ(collective_buffer_bytes(Collective::kAllGather, 800, 4), 800);
}

TEST(TensorForm, TextRoundTripsAndRefusesAnythingElse) {
  for (const TensorForm form : {kReplicated, kPartial, sharded(0), sharded(1), sharded(2)}) {
    EXPECT_EQ(parse_form(form_text(form)), form) << form_text(form);
  }
  EXPECT_EQ(form_text(sharded(2)) + form_text(kPartial) + form_text(kReplicated), "S2PR");
  for (const char* text : {"", "S", "S-1", "S10", "r", "PR", "X"}) {
    EXPECT_FALSE(parse_form(text)) << text;
  }
}

}  // namespace
}  // namespace harness::spmd
