// Collectives Gloo itself lacks, on real Gloo with three ranks in threads (issue 22):
// all-to-all of hand-made rows with unequal splits (what rank r sends rank s: (r + s) % 3 + 1
// rows of [100 r + 10 s + j, -j]) and with equal splits, every row arriving where and in the
// order the splits say; the reduce-scatter ring; and the bfloat16 all-reduce ring, on sizes
// that do not divide by 3.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "tests/runtime/gloo_ranks.h"

namespace {

constexpr int kWorld = 3;

int64_t rows_from(int sender, int receiver) { return (sender + receiver) % kWorld + 1; }

// Rows rank `sender` sends rank `receiver`: [100 sender + 10 receiver + j, -j].
at::Tensor rows(int sender, int receiver) {
  const int64_t n = rows_from(sender, receiver);
  at::Tensor out = torch::empty({n, 2});
  for (int64_t j = 0; j < n; ++j) {
    out[j][0] = 100.0 * sender + 10.0 * receiver + static_cast<double>(j);
    out[j][1] = -static_cast<double>(j);
  }
  return out;
}

TEST(AllToAll, UnequalSplitsArriveInRankOrder) {
  std::vector<at::Tensor> received(kWorld);
  const auto errors = runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& comm) {
    std::vector<at::Tensor> parts;
    std::vector<int64_t> input_splits, output_splits;
    for (int s = 0; s < kWorld; ++s) {
      parts.push_back(rows(r, s));
      input_splits.push_back(rows_from(r, s));
      output_splits.push_back(rows_from(s, r));
    }
    at::Tensor input = torch::cat(parts);
    int64_t incoming = 0;
    for (int64_t n : output_splits) incoming += n;
    at::Tensor output = torch::full({incoming, 2}, -1000.0);
    comm.all_to_all(output, input, output_splits, input_splits)->wait();
    received[r] = output;
  });
  for (const auto& e : errors) ASSERT_EQ(e, "");
  for (int r = 0; r < kWorld; ++r) {
    std::vector<at::Tensor> expected;
    for (int s = 0; s < kWorld; ++s) expected.push_back(rows(s, r));
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_TRUE(torch::equal(received[r], torch::cat(expected))) << received[r];
  }
  // Rank 1 gets 2 rows from rank 0 (values 10, 11), 3 from itself (110..112), 1 from rank 2.
  EXPECT_EQ(received[1].size(0), 6);
  EXPECT_EQ(received[1][0][0].item<float>(), 10.0f);
  EXPECT_EQ(received[1][4][0].item<float>(), 112.0f);
  EXPECT_EQ(received[1][5][0].item<float>(), 210.0f);
}

TEST(AllToAll, EqualSplitsWithoutSplitLists) {
  std::vector<at::Tensor> received(kWorld);
  const auto errors = runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& comm) {
    // Rank r's element s is 10 r + s: element s goes to rank s.
    at::Tensor input = torch::arange(kWorld, torch::kFloat) + 10.0 * r;
    at::Tensor output = torch::empty({kWorld});
    comm.all_to_all(output, input, {}, {})->wait();
    received[r] = output;
  });
  for (const auto& e : errors) ASSERT_EQ(e, "");
  for (int r = 0; r < kWorld; ++r) {
    // Rank r receives element r of every rank s: 10 s + r.
    EXPECT_TRUE(torch::equal(received[r], torch::arange(kWorld, torch::kFloat) * 10.0 + r))
        << received[r];
  }
}

TEST(ReduceScatter, RankRGetsTheSumOfChunkR) {
  // Rank r's input element i is i + 10 r (6 elements, chunks of 2): rank r gets elements
  // 2r, 2r+1 summed over the 3 ranks, 3 i + 30, in float, double and bfloat16 (small
  // integers: exact).
  for (const auto dtype : {torch::kFloat, torch::kDouble, torch::kBFloat16}) {
    std::vector<at::Tensor> received(kWorld);
    const auto errors =
        runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& comm) {
          at::Tensor output = torch::empty({2}, dtype);
          comm.reduce_scatter_sum(output, (torch::arange(6, torch::kFloat) + 10.0 * r).to(dtype));
          received[r] = output;
        });
    for (const auto& e : errors) ASSERT_EQ(e, "");
    for (int r = 0; r < kWorld; ++r) {
      const at::Tensor expected = torch::arange(2 * r, 2 * r + 2, torch::kFloat) * 3.0 + 30.0;
      EXPECT_TRUE(torch::equal(received[r], expected.to(dtype))) << dtype << received[r];
    }
  }
}

TEST(BFloat16AllReduce, RingSumsEveryElementOnEveryRank) {
  // 7 elements (chunks of 3, 2, 2) and 2 (fewer than the ranks: summed in float instead).
  // Rank r's element i is i + 10 r: small integers, exact in bfloat16, so the sums are exact.
  for (const int64_t size : {7, 2}) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::vector<at::Tensor> reduced(kWorld);
    const auto errors =
        runtime_test::on_every_rank(kWorld, [&](int r, runtime::Communicator& comm) {
          at::Tensor t = (torch::arange(size, torch::kFloat) + 10.0 * r).to(at::kBFloat16);
          comm.all_reduce_sum(t)->wait();
          reduced[r] = t;
        });
    for (const auto& e : errors) ASSERT_EQ(e, "");
    // sum over r of (i + 10 r) = 3 i + 30.
    const at::Tensor expected = (torch::arange(size, torch::kFloat) * 3.0 + 30.0);
    for (int r = 0; r < kWorld; ++r) {
      EXPECT_EQ(reduced[r].scalar_type(), at::kBFloat16);
      EXPECT_TRUE(torch::equal(reduced[r].to(at::kFloat), expected)) << reduced[r];
    }
  }
}

}  // namespace
