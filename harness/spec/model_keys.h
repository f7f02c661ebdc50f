// A zoo model's shape keys, read the same way wherever a spec names a zoo model (a training
// spec's `model:`, each entry of a `kind: spmd_search` spec's `models:`): input_shape,
// num_classes, depth, width, a mixture's experts, top_k, capacity_factor and moe_every, a
// decoder's heads, kv_heads and vocab; checked against the zoo's rules
// (runtime/models/model_catalog.h) at the model's map.
#pragma once

#include "harness/spec/spec.h"
#include "harness/spec/yaml_reader.h"

namespace harness {

// Reads the shape keys into `config`, whose name is read already (an unknown name gets an
// image's default input).
void read_zoo_shape_keys(MapReader& model, ModelConfig& config);

// The zoo's rules for the shape read, reported at the model's map; only where the map read
// cleanly so far (a wrong value is reported once, where it is).
void check_zoo_shape(MapReader& model, const ModelConfig& config);

}  // namespace harness
