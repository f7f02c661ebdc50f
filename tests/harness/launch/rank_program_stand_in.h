// A stand-in `harness-rank` for the tests of what the harness asks it (RankProgram, the answers
// file): a /bin/sh script shaped like `harness-rank version`, `harness-rank models` and
// `harness-rank layers ... [--flops] [--version]` that appends its arguments to starts.log, one
// start a line, so that a test counts the processes that would each have loaded LibTorch.
#pragma once

#include <string>
#include <vector>

#include "harness/spec/spec.h"
#include "tests/test_util.h"

namespace harness_test {

// Writes it into `dir` (as `harness-rank`); returns its path. Its LibTorch is "9.9.9".
inline std::string rank_program_stand_in(const TempDir& dir) {
  const std::string log = (dir.path() / "starts.log").string();
  const auto script = dir.write_program("harness-rank", R"(#!/bin/sh
echo "$*" >> ')" + log + R"('
version='{"torch_version": "9.9.9", "torch_python": "/usr/bin/python3", "cuda_devices": 2,
          "nccl": true, "blas": {"library": "openblas-pthread", "path": "/lib/libblas.so.3"}}'
case "$1" in
  version) echo "$version"; exit 0 ;;
  models) echo '[{"name": "mlp", "tensors": 4, "parameters": 1000, "input_shape": [64],
                  "description": "a stand-in"}]'; exit 0 ;;
  layers) ;;
  *) echo "error: unknown command $1" >&2; exit 2 ;;
esac
model=""; flops=""; with_version=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift ;;
    --flops) flops=', "forward_flops": [100, 20]' ;;
    --version) with_version=", \"version\": $version" ;;
  esac
  shift
done
if [ "$model" = nosuch ]; then echo "error: nosuch: unknown model" >&2; exit 2; fi
echo "{\"names\": [\"$model.0\", \"$model.1\"]$flops$with_version}"
)");
  return script.string();
}

// The stand-in's starts so far, one line each.
inline std::vector<std::string> rank_program_starts(const TempDir& dir) {
  return file_lines(dir.path() / "starts.log");
}

// The model `name` at input shape {64}.
inline harness::ModelConfig model_named(const std::string& name) {
  harness::ModelConfig model;
  model.name = name;
  model.input_shape = {64};
  return model;
}

}  // namespace harness_test
