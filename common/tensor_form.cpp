#include "common/tensor_form.h"

namespace harness::spmd {

std::string form_text(TensorForm form) {
  switch (form.kind) {
    case FormKind::kReplicated:
      return "R";
    case FormKind::kPartial:
      return "P";
    case FormKind::kSharded:
      break;
  }
  return "S" + std::to_string(form.dim);
}

std::optional<TensorForm> parse_form(const std::string& text) {
  if (text == "R") return kReplicated;
  if (text == "P") return kPartial;
  if (text.size() == 2 && text[0] == 'S' && text[1] >= '0' && text[1] <= '9') {
    return sharded(text[1] - '0');
  }
  return std::nullopt;
}

const char* collective_name(Collective collective) {
  switch (collective) {
    case Collective::kAllGather:
      return "all-gather";
    case Collective::kAllReduce:
      return "all-reduce";
    case Collective::kReduceScatter:
      return "reduce-scatter";
    case Collective::kAllToAll:
      return "all-to-all";
    case Collective::kNone:
      break;
  }
  return "none";
}

Collective resharding(TensorForm from, TensorForm to) {
  if (from == to || to.kind == FormKind::kPartial) return Collective::kNone;
  switch (from.kind) {
    case FormKind::kReplicated:
      return Collective::kNone;
    case FormKind::kPartial:
      return to.kind == FormKind::kReplicated ? Collective::kAllReduce : Collective::kReduceScatter;
    case FormKind::kSharded:
      break;
  }
  return to.kind == FormKind::kReplicated ? Collective::kAllGather : Collective::kAllToAll;
}

double collective_buffer_bytes(Collective collective, double tensor_bytes, int ranks) {
  if (collective == Collective::kNone) return 0.0;
  return collective == Collective::kAllToAll ? tensor_bytes / ranks : tensor_bytes;
}

}  // namespace harness::spmd
