#include "harness/spec/yaml_reader.h"

#include <algorithm>
#include <cmath>

#include "common/text_util.h"
#include "harness/spec/spec_errors.h"

namespace harness {

void SpecOrigin::mark_overridden(const std::string& dotted_path, std::string where_text,
                                 std::optional<SourcePosition> position) {
  overridden_[dotted_path] = Override{std::move(where_text), position};
}

const SpecOrigin::Override* SpecOrigin::override_of(const std::string& dotted_path) const {
  // The longest overridden prefix of the path decides: "--set run.world_size=0" owns
  // run.world_size, and "--set run={...}" owns everything below run.
  for (std::string prefix = dotted_path;;) {
    if (auto it = overridden_.find(prefix); it != overridden_.end()) return &it->second;
    const size_t dot = prefix.rfind('.');
    if (dot == std::string::npos) return nullptr;
    prefix.resize(dot);
  }
}

std::string SpecOrigin::where(const YAML::Node& node, const std::string& dotted_path) const {
  if (const Override* owner = override_of(dotted_path)) return owner->where;
  if (node.IsDefined() && !node.Mark().is_null()) {
    return format_location(file_, node.Mark().line, node.Mark().column);
  }
  return file_;
}

std::optional<SourcePosition> SpecOrigin::position(const YAML::Node& node,
                                                   const std::string& dotted_path) const {
  if (const Override* owner = override_of(dotted_path)) return owner->position;
  if (node.IsDefined() && !node.Mark().is_null()) {
    return SourcePosition{node.Mark().line + 1, node.Mark().column + 1};
  }
  return std::nullopt;
}

InputError SpecOrigin::error(const YAML::Node& node, const std::string& dotted_path,
                             const std::string& message) const {
  return InputError(where(node, dotted_path) + ": " + message, position(node, dotted_path));
}

std::string describe_node(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return node.size() == 0 ? "an empty list" : "a list";
  return node.size() == 0 ? "an empty map" : "a map";
}

MapReader::MapReader(const YAML::Node& node, std::string path, const SpecOrigin& origin)
    : node_(node), path_(std::move(path)), origin_(origin) {
  if (!node_.IsMap()) {
    const std::string what = path_.empty() ? "the spec" : "'" + path_ + "'";
    throw origin_.error(node_, path_, what + " must be a map, got " + describe_node(node_));
  }
}

std::string MapReader::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void MapReader::fail(const YAML::Node& node, const std::string& key,
                     const std::string& message) const {
  throw origin_.error(node, key_path(key), key_path(key) + ": " + message);
}

void MapReader::report(InputError error) {
  ok_ = false;
  if (origin_.errors() == nullptr) throw error;
  origin_.errors()->add(error);
}

void MapReader::report(const YAML::Node& node, const std::string& key, const std::string& message) {
  report(origin_.error(node, key_path(key), key_path(key) + ": " + message));
}

void MapReader::report_map(const std::string& message) {
  report(origin_.error(map_position(), path_, path_ + ": " + message));
}

bool MapReader::has(const std::string& key) const { return bool(node_[key]); }

YAML::Node MapReader::child(const std::string& key) {
  read_.insert(key);
  const YAML::Node& constant = node_;
  return constant[key];
}

std::optional<YAML::Node> MapReader::required(const std::string& key) {
  YAML::Node value = child(key);
  if (!value) {
    report(origin_.error(map_position(), path_, "missing required key '" + key_path(key) + "'"));
    return std::nullopt;
  }
  if (!value.IsScalar()) {
    report(value, key, "expected a single value, got " + describe_node(value));
    return std::nullopt;
  }
  return value;
}

std::string MapReader::get_string(const std::string& key, std::optional<std::string> fallback,
                                  const std::vector<std::string>& allowed) {
  const std::string stand_in = fallback.value_or(allowed.empty() ? "" : allowed.front());
  if (!has(key) && fallback) {
    read_.insert(key);
    return *fallback;
  }
  const auto value = required(key);
  if (!value) return stand_in;
  const std::string text = value->Scalar();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
    std::string message = "unknown value '" + text + "' (expected one of: " + join(allowed, ", ");
    message += ")";
    if (auto hint = closest_match(text, allowed); !hint.empty()) {
      message += "; did you mean '" + hint + "'?";
    }
    report(*value, key, message);
    return stand_in;
  }
  return text;
}

long long MapReader::get_int(const std::string& key, std::optional<long long> fallback,
                             long long min_value, long long max_value) {
  const long long stand_in = std::clamp(fallback.value_or(min_value), min_value, max_value);
  if (!has(key) && fallback) {
    read_.insert(key);
    return *fallback;
  }
  const auto value = required(key);
  if (!value) return stand_in;
  long long number = 0;
  if (!YAML::convert<long long>::decode(*value, number)) {
    report(*value, key, "expected an integer, got " + describe_node(*value));
    return stand_in;
  }
  if (number < min_value) {
    report(*value, key,
           "must be >= " + std::to_string(min_value) + " (got " + std::to_string(number) + ")");
    return stand_in;
  }
  if (number > max_value) {
    report(*value, key,
           "must be <= " + std::to_string(max_value) + " (got " + std::to_string(number) + ")");
    return stand_in;
  }
  return number;
}

double MapReader::get_double(const std::string& key, std::optional<double> fallback,
                             double exclusive_min) {
  const double stand_in = fallback.value_or(std::max(1.0, exclusive_min + 1));
  if (!has(key) && fallback) {
    read_.insert(key);
    return *fallback;
  }
  const auto value = required(key);
  if (!value) return stand_in;
  double number = 0;
  if (!YAML::convert<double>::decode(*value, number) || !std::isfinite(number)) {
    report(*value, key, "expected a number, got " + describe_node(*value));
    return stand_in;
  }
  if (!(number > exclusive_min)) {
    const std::string bound =
        exclusive_min == kZeroOrMore ? ">= 0" : "> " + format_number(exclusive_min);
    report(*value, key, "must be " + bound + " (got " + value->Scalar() + ")");
    return stand_in;
  }
  return number;
}

bool MapReader::get_bool(const std::string& key, bool fallback) {
  if (!has(key)) {
    read_.insert(key);
    return fallback;
  }
  const auto value = required(key);
  if (!value) return fallback;
  bool flag = false;
  if (!YAML::convert<bool>::decode(*value, flag)) {
    report(*value, key, "expected true or false, got " + describe_node(*value));
    return fallback;
  }
  return flag;
}

template <typename T>
std::vector<T> MapReader::get_list(const std::string& key, std::optional<std::vector<T>> fallback,
                                   std::vector<T> stand_in, const std::string& entries,
                                   const EntryReader<T>& read_entry) {
  if (!has(key) && fallback) {
    read_.insert(key);
    return *fallback;
  }
  if (fallback) stand_in = *fallback;
  YAML::Node value = child(key);
  if (!value || !value.IsSequence() || value.size() == 0) {
    report(value ? value : map_position(), key,
           "expected a non-empty list of " + entries + ", got " + describe_node(value));
    return stand_in;
  }
  std::vector<T> read;
  for (const auto& item : value) {
    T entry{};
    if (const std::string problem = read_entry(item, entry); !problem.empty()) {
      report(item, key, problem);
      return stand_in;
    }
    read.push_back(entry);
  }
  return read;
}

std::vector<long long> MapReader::get_int_list(const std::string& key,
                                               std::optional<std::vector<long long>> fallback,
                                               long long min_value) {
  return get_list<long long>(
      key, fallback, {min_value}, "integers",
      [min_value](const YAML::Node& item, long long& number) -> std::string {
        if (!item.IsScalar() || !YAML::convert<long long>::decode(item, number)) {
          return "expected an integer, got " + describe_node(item);
        }
        if (number < min_value) {
          return "every entry must be >= " + std::to_string(min_value) + " (got " +
                 std::to_string(number) + ")";
        }
        return "";
      });
}

std::vector<double> MapReader::get_double_list(const std::string& key,
                                               std::optional<std::vector<double>> fallback,
                                               double exclusive_min) {
  return get_list<double>(
      key, fallback, {1.0}, "numbers",
      [exclusive_min](const YAML::Node& item, double& number) -> std::string {
        if (!item.IsScalar() || !YAML::convert<double>::decode(item, number) ||
            !std::isfinite(number)) {
          return "expected a number, got " + describe_node(item);
        }
        if (!(number > exclusive_min)) {
          const std::string bound =
              exclusive_min == kZeroOrMore ? ">= 0" : "> " + format_number(exclusive_min);
          return "every entry must be " + bound + " (got " + item.Scalar() + ")";
        }
        return "";
      });
}

void MapReader::finish() {
  std::vector<std::string> known(read_.begin(), read_.end());
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (read_.count(key)) continue;
    std::string message = "unknown key '" + key_path(key) + "'";
    if (auto hint = closest_match(key, known); !hint.empty()) {
      message += " (did you mean '" + hint + "'?)";
    }
    report(origin_.error(entry.first, key_path(key), message));
  }
}

}  // namespace harness
