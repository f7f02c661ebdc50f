// The rank program, `harness-rank`, seen from the harness: where it is (beside the harness
// binary), how to run it, and the zoo's answers that need LibTorch (layer chains, per-layer
// forward times, parameter counts, the LibTorch version), asked once per model and shape.
// This is how the harness stays free of LibTorch: whatever needs it runs in that process.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace harness {

struct ModelConfig;
struct RankDevices;

// The running executable's path (/proc/self/exe); empty when it cannot be read.
std::filesystem::path this_executable();

class RankProgram {
 public:
  // The `harness-rank` in the folder of the running executable.
  static RankProgram beside_this_executable();
  explicit RankProgram(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }

  // Runs it with `args` (standard input and output closed and captured) and parses what it
  // prints as JSON. Its exit code 2 (bad input) becomes an InputError with its one-line
  // message; any other failure a std::runtime_error.
  nlohmann::json query(const std::vector<std::string>& args) const;

  // Runs it with `args` on this process's standard streams; returns its exit code (128 + the
  // signal when one ended it).
  int run(const std::vector<std::string>& args) const;

  // Replaces this process with it (exit code, signals and output are then its own).
  [[noreturn]] void exec(const std::vector<std::string>& args) const;

  // The zoo's layer chain of `model` at its input shape (names), and per-layer forward times
  // at its batch size; each asked once per model, shape and batch. The first of these
  // questions also brings the answers below (torch_version, devices, blas): ask a model
  // question first where both will be asked, and one process answers both.
  const std::vector<std::string>& layer_names(const ModelConfig& model);
  const std::vector<double>& layer_forward_ms(const ModelConfig& model);
  // Per-layer forward FLOPs of one sample (runtime/models/flop_count.h), asked once per model.
  const std::vector<double>& layer_forward_flops(const ModelConfig& model);
  // Each layer of `model`'s chain: name, kind, parameters and one sample's output shape (a
  // JSON array, `harness-rank layers --chain`); asked each time, for `harness models NAME`.
  nlohmann::json layer_chain(const ModelConfig& model);
  // The zoo's listing (`harness-rank models`: name, tensors, parameters, input shape,
  // description of each model), asked once.
  const nlohmann::json& models();
  std::string torch_version();
  // The CUDA devices it sees here and whether its LibTorch has NCCL.
  RankDevices devices();
  // {"library": "openblas-openmp", "path": ...}: the BLAS it loads in this environment.
  nlohmann::json blas();

  // Every answer given so far, with what they hold for: the program (its path, size and
  // modification time) and the variables of this environment that change what it loads and
  // sees (LD_LIBRARY_PATH, LD_PRELOAD, CUDA_VISIBLE_DEVICES). HARNESS_RANK_ANSWERS names a
  // file that keeps them from one command to the next (harness/launch/rank_answers_file.h):
  // `harness ab` gives each side one, so that each side asks once, not once a round.
  nlohmann::json answers() const;
  // Takes the answers `saved` holds (answers()'s form) as given, where they hold for this
  // program here; returns whether it did. Anything else, malformed included, is not taken.
  bool adopt_answers(const nlohmann::json& saved);

 private:
  // `harness-rank layers ARGS`, with `--version` while the version is not known yet.
  nlohmann::json ask_about_model(std::vector<std::string> args);
  // `harness-rank version`'s answer, asked unless a model question brought it.
  const nlohmann::json& version();
  // What answers() says they hold for; null when the program cannot be read.
  nlohmann::json circumstances() const;

  std::string path_;
  std::map<std::string, std::vector<std::string>> layer_names_;
  std::map<std::string, std::vector<double>> layer_forward_ms_;
  std::map<std::string, std::vector<double>> layer_forward_flops_;
  std::optional<nlohmann::json> version_;  // `harness-rank version`'s answer, asked once
  std::optional<nlohmann::json> models_;   // `harness-rank models`' answer, asked once
};

}  // namespace harness
