#include "harness/launch/rank_program.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/child_process.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/spec/spec.h"

namespace harness {
namespace {

namespace fs = std::filesystem;

// The last non-empty line, without the "error: " the rank program starts it with.
std::string last_line(const std::string& text) {
  std::string line;
  size_t end = text.find_last_not_of("\n");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  line = text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
  if (line.rfind("error: ", 0) == 0) line = line.substr(7);
  return line;
}

std::string model_key(const ModelConfig& model) {
  std::string key = model.name + "/" + std::to_string(model.num_classes) + "/" +
                    std::to_string(model.depth) + "/" + std::to_string(model.width) + "/" +
                    runtime::moe_flag_text(model.moe) + "/" +
                    runtime::decoder_flag_text(model.decoder);
  for (long long d : model.input_shape) key += "/" + std::to_string(d);
  return key;
}

std::vector<std::string> layer_query(const ModelConfig& model) {
  std::vector<std::string> args = {"layers"};
  for (auto& flag : rank_model_flags(model)) args.push_back(std::move(flag));
  return args;
}

}  // namespace

fs::path this_executable() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : self;
}

RankProgram RankProgram::beside_this_executable() {
  const fs::path self = this_executable();
  return RankProgram(
      (self.empty() ? fs::path("harness-rank") : self.parent_path() / "harness-rank").string());
}

nlohmann::json RankProgram::query(const std::vector<std::string>& args) const {
  const CapturedOutput captured = run_captured(path_, args);
  if (captured.exit_code == 2) throw InputError(last_line(captured.err));
  if (captured.exit_code != 0) {
    throw std::runtime_error(path_ + " " + (args.empty() ? "" : args.front()) + " failed (exit " +
                             std::to_string(captured.exit_code) + "): " + last_line(captured.err));
  }
  try {
    return parse_json(captured.out);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(path_ + " " + (args.empty() ? "" : args.front()) +
                             " printed no JSON: " + last_line(captured.out));
  }
}

int RankProgram::run(const std::vector<std::string>& args) const {
  ChildSpec spec;
  spec.program = path_;
  spec.args = args;
  spec.inherit_stdin = true;
  ChildProcess child(spec);
  return child.wait().code;
}

void RankProgram::exec(const std::vector<std::string>& args) const {
  replace_this_process(path_, args);
}

nlohmann::json RankProgram::ask_about_model(std::vector<std::string> args) {
  // The first question asks the version's too: one process that loads LibTorch, not two.
  const bool with_version = !version_;
  if (with_version) args.push_back("--version");
  nlohmann::json answer = query(args);
  if (with_version) version_ = answer.at("version");
  return answer;
}

const nlohmann::json& RankProgram::version() {
  if (!version_) version_ = query({"version"});
  return *version_;
}

const std::vector<std::string>& RankProgram::layer_names(const ModelConfig& model) {
  const std::string key = model_key(model);
  auto found = layer_names_.find(key);
  if (found != layer_names_.end()) return found->second;
  const auto answer = ask_about_model(layer_query(model));
  return layer_names_[key] = answer.at("names").get<std::vector<std::string>>();
}

const std::vector<double>& RankProgram::layer_forward_ms(const ModelConfig& model) {
  const std::string key = model_key(model) + "@" + std::to_string(model.batch_size);
  auto found = layer_forward_ms_.find(key);
  if (found != layer_forward_ms_.end()) return found->second;
  auto args = layer_query(model);
  args.insert(args.end(), {"--forward-ms-batch", std::to_string(model.batch_size)});
  const auto answer = ask_about_model(std::move(args));
  layer_names_[model_key(model)] = answer.at("names").get<std::vector<std::string>>();
  return layer_forward_ms_[key] = answer.at("forward_ms").get<std::vector<double>>();
}

const std::vector<double>& RankProgram::layer_forward_flops(const ModelConfig& model) {
  const std::string key = model_key(model);
  auto found = layer_forward_flops_.find(key);
  if (found != layer_forward_flops_.end()) return found->second;
  auto args = layer_query(model);
  args.push_back("--flops");
  const auto answer = ask_about_model(std::move(args));
  layer_names_[key] = answer.at("names").get<std::vector<std::string>>();
  return layer_forward_flops_[key] = answer.at("forward_flops").get<std::vector<double>>();
}

nlohmann::json RankProgram::layer_chain(const ModelConfig& model) {
  auto args = layer_query(model);
  args.push_back("--chain");
  const auto answer = ask_about_model(std::move(args));
  layer_names_[model_key(model)] = answer.at("names").get<std::vector<std::string>>();
  return answer.at("chain");
}

const nlohmann::json& RankProgram::models() {
  if (!models_) models_ = query({"models"});
  return *models_;
}

std::string RankProgram::torch_version() {
  return version().at("torch_version").get<std::string>();
}

nlohmann::json RankProgram::blas() { return version().value("blas", nlohmann::json::object()); }

RankDevices RankProgram::devices() {
  const nlohmann::json& answer = version();
  return {static_cast<int>(answer.value("cuda_devices", 0LL)), answer.value("nccl", false)};
}

nlohmann::json RankProgram::circumstances() const {
  std::error_code error;
  const auto bytes = fs::file_size(path_, error);
  if (error) return nullptr;
  const auto modified = fs::last_write_time(path_, error);
  if (error) return nullptr;
  nlohmann::json held = {{"program", fs::absolute(path_).string()},
                         {"bytes", bytes},
                         {"modified", modified.time_since_epoch().count()}};
  for (const char* name : {"LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_VISIBLE_DEVICES"}) {
    const char* value = std::getenv(name);
    held["environment"][name] = value ? nlohmann::json(value) : nlohmann::json(nullptr);
  }
  return held;
}

nlohmann::json RankProgram::answers() const {
  return {{"holds_for", circumstances()},
          {"version", version_ ? *version_ : nlohmann::json(nullptr)},
          {"layer_names", layer_names_},
          {"layer_forward_ms", layer_forward_ms_},
          {"layer_forward_flops", layer_forward_flops_},
          {"models", models_ ? *models_ : nlohmann::json(nullptr)}};
}

bool RankProgram::adopt_answers(const nlohmann::json& saved) {
  const nlohmann::json held = circumstances();
  if (held.is_null() || !saved.is_object() || saved.value("holds_for", nlohmann::json()) != held) {
    return false;
  }
  try {
    auto names = saved.at("layer_names").get<decltype(layer_names_)>();
    auto forward_ms = saved.at("layer_forward_ms").get<decltype(layer_forward_ms_)>();
    auto flops = saved.at("layer_forward_flops").get<decltype(layer_forward_flops_)>();
    const nlohmann::json& version = saved.at("version");
    if (!version.is_null() && !version.is_object()) return false;
    // An entry written before the listing was kept has none: it is asked when needed.
    const nlohmann::json models = saved.value("models", nlohmann::json());
    if (!models.is_null() && !models.is_array()) return false;
    layer_names_ = std::move(names);
    layer_forward_ms_ = std::move(forward_ms);
    layer_forward_flops_ = std::move(flops);
    if (version.is_object()) version_ = version;
    if (models.is_array()) models_ = models;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  return true;
}

}  // namespace harness
