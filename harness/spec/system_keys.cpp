#include "harness/spec/system_keys.h"

#include "common/text_util.h"

namespace harness {

runtime::DataAxis read_sharded_data_axis(MapReader& reader) {
  runtime::DataAxis data;
  data.zero_stage = static_cast<int>(reader.get_int("stage", 3, 1, 3));
  data.unit = runtime::parse_shard_unit(reader.get_string("unit", "layer", {"layer", "model"}));
  data.prefetch = reader.get_bool("prefetch", true);
  return data;
}

int read_replica_zero_stage(MapReader& reader) {
  return static_cast<int>(reader.get_int("zero_stage", 0, 0, 3));
}

runtime::TensorAxis read_tensor_axis(MapReader& reader) {
  runtime::TensorAxis tensor;
  tensor.degree = static_cast<int>(reader.get_int("tensor", std::nullopt, 2, 256));
  tensor.sequence_parallel = reader.get_bool("sequence_parallel", false);
  return tensor;
}

void read_recompute_gather(MapReader& reader, runtime::TensorAxis& tensor) {
  tensor.recompute_gather = reader.get_bool("recompute_gather", false);
  if (tensor.recompute_gather && !tensor.sequence_parallel) {
    reader.report(reader.child("recompute_gather"), "recompute_gather",
                  "goes with 'sequence_parallel: true' (it keeps the token shards)");
  }
}

runtime::TensorAxis read_tensor_system_axis(MapReader& reader) {
  runtime::TensorAxis tensor = read_tensor_axis(reader);
  tensor.vocabulary_parallel = reader.get_bool("vocabulary_parallel", false);
  read_recompute_gather(reader, tensor);
  return tensor;
}

std::string tensor_replicas_problem(int zero_stage, int degree, long long world) {
  if (zero_stage == 0 || world != degree) return "";
  return "zero_stage " + std::to_string(zero_stage) + " shards over the replicas, and tensor " +
         std::to_string(degree) + " on " + std::to_string(world) + " ranks leaves one";
}

double read_bucket_mb(MapReader& reader, const std::string& key, double fallback) {
  const double mb = reader.get_double(key, fallback, 0.0);
  if (mb * 1024 * 1024 < 1) {
    reader.report(reader.child(key), key,
                  "must be at least one byte (1/1048576 MiB), got " + format_number(mb, 12));
    return fallback;
  }
  return mb;
}

}  // namespace harness
