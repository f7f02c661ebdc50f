// How one tensor lies across the ranks of an SPMD group, as HiDup's and Alpa's searches name
// it: whole on every rank (replicated), split along one dimension (sharded), or a partial sum
// whose rank-wise terms add up to it. Changing a tensor's form is a collective. Here because the
// search (planner/spmd) writes forms into a plan and the rank that runs the plan reads them.
#pragma once

#include <optional>
#include <string>

namespace harness::spmd {

enum class FormKind { kReplicated, kSharded, kPartial };

struct TensorForm {
  FormKind kind = FormKind::kReplicated;
  int dim = -1;  // the split dimension of a sharded tensor; -1 otherwise
  bool operator==(const TensorForm&) const = default;
};

inline constexpr TensorForm kReplicated{FormKind::kReplicated, -1};
inline constexpr TensorForm kPartial{FormKind::kPartial, -1};
inline constexpr TensorForm sharded(int dim) { return {FormKind::kSharded, dim}; }

// "R", "P", "S0", "S1", ...
std::string form_text(TensorForm form);
// The form `form_text` wrote; nullopt for any other text.
std::optional<TensorForm> parse_form(const std::string& text);

enum class Collective { kNone, kAllGather, kAllReduce, kReduceScatter, kAllToAll };

// "all-gather", "all-reduce", "reduce-scatter", "all-to-all", "none".
const char* collective_name(Collective collective);

// The collective that turns a tensor of form `from` into form `to`: sharded to replicated an
// all-gather, partial to replicated an all-reduce, partial to sharded a reduce-scatter, sharded
// on one dimension to another an all-to-all. Replicated to sharded is a local slice, replicated
// or sharded to partial a local zero fill (a rank's share, zeros elsewhere): kNone.
Collective resharding(TensorForm from, TensorForm to);

// The bytes one rank hands the collective in nccl-tests' sense (comm.json's sizes) when it
// reshards a tensor of `tensor_bytes` over `ranks`: the whole tensor for an all-gather's output,
// an all-reduce's or a reduce-scatter's input; one rank's shard for an all-to-all's input.
double collective_buffer_bytes(Collective collective, double tensor_bytes, int ranks);

}  // namespace harness::spmd
