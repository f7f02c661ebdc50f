#include "runtime/pipeline/schedule_orders.h"

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>

namespace runtime::schedule_orders {

namespace {

using Kind = PipelineAction::Kind;

// Hands out each stage's micro-batches in order, per kind of pass.
class NextMicroBatch {
 public:
  int take(int stage) { return next_[stage]++; }

 private:
  std::map<int, int> next_;
};

}  // namespace

std::vector<PipelineAction> gpipe(int rank, int micro_batches) {
  std::vector<PipelineAction> actions;
  for (int m = 0; m < micro_batches; ++m) actions.push_back({Kind::kForward, rank, m});
  for (int m = 0; m < micro_batches; ++m) actions.push_back({Kind::kBackward, rank, m});
  return actions;
}

std::vector<PipelineAction> one_f_one_b(int ranks, int rank, int micro_batches) {
  // The later a stage, the sooner its first backward can start, so it needs fewer forwards in
  // flight to keep busy; the last stage needs none.
  const int warmup = std::min(ranks - rank - 1, micro_batches);
  std::vector<PipelineAction> actions;
  int forward = 0, backward = 0;
  for (; forward < warmup; ++forward) actions.push_back({Kind::kForward, rank, forward});
  while (forward < micro_batches) {
    actions.push_back({Kind::kForward, rank, forward++});
    actions.push_back({Kind::kBackward, rank, backward++});
  }
  while (backward < micro_batches) actions.push_back({Kind::kBackward, rank, backward++});
  return actions;
}

std::vector<PipelineAction> interleaved(int ranks, int stages_per_rank, int rank,
                                        int micro_batches) {
  // Micro-batches go through a rank's stages in rounds of `per_round` (p when m is a multiple
  // of p): the rank forwards a round through its first stage, then its second, ..., and the
  // backwards visit its stages in the reverse order, round by round.
  const int rounds = std::max(1, micro_batches / ranks);
  if (micro_batches % rounds != 0) {
    throw std::invalid_argument("interleaved_1f1b needs the micro-batches (" +
                                std::to_string(micro_batches) + ") to be a multiple of " +
                                std::to_string(rounds) + ", max(1, micro-batches / ranks)");
  }
  const int per_round = micro_batches / rounds;
  const int total = stages_per_rank * micro_batches;
  // Warm-up: every stage but the last one round ahead, plus two per hop to the last rank (a
  // forward there and the backward coming back).
  const int warmup = std::min((stages_per_rank - 1) * per_round + 2 * (ranks - 1 - rank), total);
  const auto forward_stage = [&](int k) {
    return (k / per_round) % stages_per_rank * ranks + rank;
  };
  const auto backward_stage = [&](int k) {
    return (stages_per_rank - 1 - (k / per_round) % stages_per_rank) * ranks + rank;
  };
  NextMicroBatch forward_mb, backward_mb;
  std::vector<PipelineAction> actions;
  const auto forward = [&](int k) {
    const int stage = forward_stage(k);
    actions.push_back({Kind::kForward, stage, forward_mb.take(stage)});
  };
  const auto backward = [&](int k) {
    const int stage = backward_stage(k);
    actions.push_back({Kind::kBackward, stage, backward_mb.take(stage)});
  };
  for (int k = 0; k < warmup; ++k) forward(k);
  for (int k = warmup; k < total; ++k) {
    forward(k);
    backward(k - warmup);
  }
  for (int k = total - warmup; k < total; ++k) backward(k);
  return actions;
}

std::vector<PipelineAction> zero_bubble_h1(int ranks, int rank, int micro_batches) {
  // 1F1B's order with each B split into I and W: rank r runs its W of a micro-batch right after
  // its I once r micro-batches' W's wait, so the last ranks (whose 1F1B tail idles most) carry
  // the most W's into the cool-down. Every rank then holds at most p micro-batches.
  const int warmup = std::min(ranks - rank - 1, micro_batches);
  std::vector<PipelineAction> actions;
  std::deque<int> waiting_w;
  int forward = 0;
  for (; forward < warmup; ++forward) actions.push_back({Kind::kForward, rank, forward});
  for (int backward = 0; backward < micro_batches; ++backward) {
    if (forward < micro_batches) actions.push_back({Kind::kForward, rank, forward++});
    actions.push_back({Kind::kBackwardInput, rank, backward});
    waiting_w.push_back(backward);
    if (backward >= rank) {
      actions.push_back({Kind::kBackwardWeight, rank, waiting_w.front()});
      waiting_w.pop_front();
    }
  }
  for (int m : waiting_w) actions.push_back({Kind::kBackwardWeight, rank, m});
  return actions;
}

std::vector<PipelineAction> zero_bubble_v(int ranks, int rank, int micro_batches) {
  // Rank r holds stage r (going down the V) and stage 2p-1-r (coming back up); the last stage
  // sits on rank 0 beside the first. The order is built for at least 2p-1 micro-batches, the
  // fewest that fill the V, and the actions of micro-batches beyond m are left out.
  const int m = std::max(2 * ranks - 1, micro_batches);
  const int down = rank, up = 2 * ranks - 1 - rank;
  std::vector<PipelineAction> actions;
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  const auto add = [&](Kind kind, int stage, int& counter) {
    actions.push_back({kind, stage, counter++});
  };
  const auto add_iw = [&](int stage, int& counter) {
    actions.push_back({Kind::kBackwardInput, stage, counter});
    actions.push_back({Kind::kBackwardWeight, stage, counter++});
  };
  // Warm-up: forwards down the V until the first micro-batch comes back up to this rank.
  for (int i = 0; i < 2 * (ranks - rank) - 1; ++i) add(Kind::kForward, down, f0);
  for (int i = 0; i < rank; ++i) {
    add(Kind::kForward, up, f1);
    add(Kind::kForward, down, f0);
  }
  for (int i = 0; i < ranks - rank; ++i) {
    add(Kind::kForward, up, f1);
    add_iw(up, b1);
  }
  // Steady state: a forward and a backward on each leg of the V.
  while (f1 < f0 || f0 < m) {
    if (f0 < m) add(Kind::kForward, down, f0);
    add_iw(down, b0);
    add(Kind::kForward, up, f1);
    add_iw(up, b1);
  }
  // Cool-down: the input gradients first, the W's behind them.
  int w0 = b0, w1 = b1;
  for (int i = 0; i < rank; ++i) {
    add(Kind::kBackwardInput, down, b0);
    add(Kind::kBackwardInput, up, b1);
  }
  for (int i = 0; i < ranks - rank; ++i) {
    add(Kind::kBackwardInput, down, b0);
    add(Kind::kBackwardWeight, down, w0);
  }
  while (w1 < b1) add(Kind::kBackwardWeight, up, w1);
  while (w0 < b0) add(Kind::kBackwardWeight, down, w0);
  std::erase_if(actions, [&](const PipelineAction& a) { return a.micro_batch >= micro_batches; });
  return actions;
}

}  // namespace runtime::schedule_orders
