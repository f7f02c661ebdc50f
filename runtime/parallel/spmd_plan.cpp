#include "runtime/parallel/spmd_plan.h"

#include <set>
#include <stdexcept>

namespace runtime {
namespace {

using harness::spmd::TensorForm;

std::string text_at(const nlohmann::json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_string()) {
    throw std::invalid_argument(where + ": '" + key + "' must be a string");
  }
  return object.at(key).get<std::string>();
}

TensorForm form_at(const nlohmann::json& object, const char* key, const std::string& where) {
  const std::string text = text_at(object, key, where);
  const auto form = harness::spmd::parse_form(text);
  if (!form) throw std::invalid_argument(where + ": '" + key + "' is no form: '" + text + "'");
  return *form;
}

std::optional<TensorForm> optional_form_at(const nlohmann::json& object, const char* key,
                                           const std::string& where) {
  if (object.is_object() && object.contains(key) && object.at(key).is_null()) return std::nullopt;
  return form_at(object, key, where);
}

// A word of the plan's vocabulary (common/spmd_vocabulary.h), parsed by `parse`.
template <typename Parse>
auto word_at(const nlohmann::json& object, const char* key, const std::string& where, Parse parse) {
  const std::string text = text_at(object, key, where);
  const auto kind = parse(text);
  if (!kind) throw std::invalid_argument(where + ": unknown " + key + " '" + text + "'");
  return *kind;
}

SpmdStep read_step(const nlohmann::json& entry, const std::set<std::string>& earlier) {
  const std::string name = text_at(entry, "name", "spmd plan operator");
  const std::string where = "spmd plan operator '" + name + "'";
  SpmdStep step{name,
                word_at(entry, "kind", where, harness::spmd::parse_operator_kind),
                word_at(entry, "signature", where, harness::spmd::parse_signature_kind),
                {},
                form_at(entry, "output", where),
                optional_form_at(entry, "output_grad", where)};
  const auto& inputs = entry.value("inputs", nlohmann::json::array());
  if (!inputs.is_array()) throw std::invalid_argument(where + ": 'inputs' must be a list");
  for (const auto& input : inputs) {
    SpmdInput read{text_at(input, "from", where), form_at(input, "form", where),
                   optional_form_at(input, "grad", where)};
    if (!earlier.count(read.from)) {
      throw std::invalid_argument(where + ": reads '" + read.from + "', not an earlier operator");
    }
    step.inputs.push_back(std::move(read));
  }
  return step;
}

}  // namespace

std::vector<SpmdStep> read_spmd_steps(const nlohmann::json& plan) {
  if (!plan.is_object() || !plan.contains("operators") || !plan.at("operators").is_array()) {
    throw std::invalid_argument("spmd plan: no 'operators' list");
  }
  std::vector<SpmdStep> steps;
  std::set<std::string> earlier;
  for (const auto& entry : plan.at("operators")) {
    steps.push_back(read_step(entry, earlier));
    if (!earlier.insert(steps.back().name).second) {
      throw std::invalid_argument("spmd plan: operator '" + steps.back().name + "' twice");
    }
  }
  return steps;
}

}  // namespace runtime
