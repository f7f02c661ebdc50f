#include "baselines/ddp/power_sgd.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <stdexcept>

namespace baselines {

void orthonormalize_columns(at::Tensor matrix) {
  const int64_t columns = matrix.size(1);
  for (int64_t i = 0; i < columns; ++i) {
    at::Tensor column = matrix.narrow(1, i, 1);
    column.div_(column.norm() + 1e-8);
    if (i + 1 < columns) {
      at::Tensor rest = matrix.narrow(1, i + 1, columns - i - 1);
      rest.sub_(column * (column * rest).sum(0, /*keepdim=*/true));
    }
  }
}

PowerSgdBucket::PowerSgdBucket(const std::vector<std::vector<int64_t>>& members,
                               const std::vector<int64_t>& offsets, PowerSgdOptions options)
    : options_(options) {
  if (options.rank < 1) throw std::invalid_argument("PowerSGD rank must be at least 1");
  if (members.size() != offsets.size()) {
    throw std::invalid_argument("PowerSGD: one offset per bucket member");
  }
  for (size_t i = 0; i < members.size(); ++i) {
    Member member;
    member.offset = offsets[i];
    member.numel = 1;
    for (int64_t d : members[i]) member.numel *= d;
    if (members[i].size() >= 2) {
      member.rows = members[i][0];
      member.columns = member.numel / member.rows;
      member.compressed =
          2 * options.rank * (member.rows + member.columns) < member.rows * member.columns;
    }
    if (member.compressed) {
      at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(options.seed + i);
      member.q = at::randn({member.columns, options.rank}, generator, at::kFloat);
      member.error = at::zeros({member.rows, member.columns}, at::kFloat);
    }
    members_.push_back(std::move(member));
  }
}

void PowerSgdBucket::all_reduce_average(at::Tensor flat, runtime::Communicator& group) {
  const int world = group.world_size();
  std::vector<at::Tensor> exact, matrices, inputs, ps;
  std::vector<Member*> compressed;
  for (auto& member : members_) {
    at::Tensor part = flat.narrow(0, member.offset, member.numel);
    if (!member.compressed) {
      exact.push_back(part);
      continue;
    }
    at::Tensor matrix = part.view({member.rows, member.columns});
    // The state is made on the CPU (a CPU generator, the same on every rank); it follows the
    // gradients to their device once.
    if (member.error.device() != matrix.device()) {
      member.q = member.q.to(matrix.device());
      member.error = member.error.to(matrix.device());
    }
    matrix.add_(member.error.to(matrix.scalar_type()));
    matrices.push_back(matrix);
    inputs.push_back(matrix.clone());
    ps.push_back(matrix.mm(member.q.to(matrix.scalar_type())));
    compressed.push_back(&member);
  }
  if (!exact.empty()) {
    at::Tensor joined = at::cat(exact);
    group.all_reduce_sum(joined)->wait();
    joined.div_(world);
    int64_t at = 0;
    for (auto& part : exact) {
      part.copy_(joined.narrow(0, at, part.numel()));
      at += part.numel();
    }
  }
  if (compressed.empty()) return;
  // P of every matrix in one all-reduce, then Q of every matrix in another.
  const auto all_reduce_joined = [&](std::vector<at::Tensor>& pieces) {
    std::vector<at::Tensor> flat_pieces;
    for (auto& piece : pieces) flat_pieces.push_back(piece.reshape({-1}));
    at::Tensor joined = at::cat(flat_pieces);
    group.all_reduce_sum(joined)->wait();
    int64_t at = 0;
    for (auto& piece : pieces) {
      piece = joined.narrow(0, at, piece.numel()).view(piece.sizes()).clone();
      at += piece.numel();
    }
  };
  all_reduce_joined(ps);
  std::vector<at::Tensor> qs;
  for (size_t i = 0; i < compressed.size(); ++i) {
    orthonormalize_columns(ps[i]);
    qs.push_back(matrices[i].t().mm(ps[i]));
  }
  all_reduce_joined(qs);
  for (size_t i = 0; i < compressed.size(); ++i) {
    compressed[i]->q = qs[i].to(at::kFloat);
    matrices[i].copy_(ps[i].mm(qs[i].t()).div_(world));
    compressed[i]->error = (inputs[i] - matrices[i]).to(at::kFloat);
  }
}

int64_t PowerSgdBucket::wire_bytes(int64_t element_size) const {
  int64_t elements = 0;
  for (const auto& member : members_) {
    elements += member.compressed ? options_.rank * (member.rows + member.columns) : member.numel;
  }
  return elements * element_size;
}

}  // namespace baselines
