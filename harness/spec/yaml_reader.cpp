#include "harness/spec/yaml_reader.h"

#include <algorithm>
#include <cmath>

#include "common/input_error.h"
#include "common/text_util.h"

namespace harness {

void SpecOrigin::mark_overridden(const std::string& dotted_path, std::string option_text) {
  overridden_[dotted_path] = std::move(option_text);
}

std::string SpecOrigin::where(const YAML::Node& node, const std::string& dotted_path) const {
  // The longest overridden prefix of the path decides: "--set run.world_size=0" owns
  // run.world_size, and "--set run={...}" owns everything below run.
  for (std::string prefix = dotted_path;;) {
    if (auto it = overridden_.find(prefix); it != overridden_.end()) return it->second;
    const size_t dot = prefix.rfind('.');
    if (dot == std::string::npos) break;
    prefix.resize(dot);
  }
  if (node.IsDefined() && !node.Mark().is_null()) {
    return format_location(file_, node.Mark().line, node.Mark().column);
  }
  return file_;
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
    throw InputError(origin_.where(node_, path_) + ": " + what + " must be a map, got " +
                     describe_node(node_));
  }
}

std::string MapReader::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void MapReader::fail(const YAML::Node& node, const std::string& key,
                     const std::string& message) const {
  throw InputError(origin_.where(node, key_path(key)) + ": " + key_path(key) + ": " + message);
}

bool MapReader::has(const std::string& key) const { return bool(node_[key]); }

YAML::Node MapReader::child(const std::string& key) {
  read_.insert(key);
  const YAML::Node& constant = node_;
  return constant[key];
}

YAML::Node MapReader::required(const std::string& key) {
  YAML::Node value = child(key);
  if (!value) {
    throw InputError(origin_.where(node_, path_) + ": missing required key '" + key_path(key) +
                     "'");
  }
  if (!value.IsScalar()) fail(value, key, "expected a single value, got " + describe_node(value));
  return value;
}

std::string MapReader::get_string(const std::string& key, std::optional<std::string> fallback,
                                  const std::vector<std::string>& allowed) {
  if (!has(key) && fallback) {
    read_.insert(key);
    return *fallback;
  }
  YAML::Node value = required(key);
  const std::string text = value.Scalar();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
    std::string message = "unknown value '" + text + "' (expected one of: " + join(allowed, ", ");
    message += ")";
    if (auto hint = closest_match(text, allowed); !hint.empty()) {
      message += "; did you mean '" + hint + "'?";
    }
    fail(value, key, message);
  }
  return text;
}

long long MapReader::get_int(const std::string& key, std::optional<long long> fallback,
                             long long min_value, long long max_value) {
  if (!has(key) && fallback) {
    read_.insert(key);
    return *fallback;
  }
  YAML::Node value = required(key);
  long long number = 0;
  if (!YAML::convert<long long>::decode(value, number)) {
    fail(value, key, "expected an integer, got " + describe_node(value));
  }
  if (number < min_value) {
    fail(value, key,
         "must be >= " + std::to_string(min_value) + " (got " + std::to_string(number) + ")");
  }
  if (number > max_value) {
    fail(value, key,
         "must be <= " + std::to_string(max_value) + " (got " + std::to_string(number) + ")");
  }
  return number;
}

double MapReader::get_double(const std::string& key, std::optional<double> fallback,
                             double exclusive_min) {
  if (!has(key) && fallback) {
    read_.insert(key);
    return *fallback;
  }
  YAML::Node value = required(key);
  double number = 0;
  if (!YAML::convert<double>::decode(value, number) || !std::isfinite(number)) {
    fail(value, key, "expected a number, got " + describe_node(value));
  }
  if (!(number > exclusive_min)) {
    fail(value, key,
         "must be > " + format_number(exclusive_min) + " (got " + format_number(number) + ")");
  }
  return number;
}

bool MapReader::get_bool(const std::string& key, bool fallback) {
  if (!has(key)) {
    read_.insert(key);
    return fallback;
  }
  YAML::Node value = required(key);
  bool flag = false;
  if (!YAML::convert<bool>::decode(value, flag)) {
    fail(value, key, "expected true or false, got " + describe_node(value));
  }
  return flag;
}

std::vector<long long> MapReader::get_int_list(const std::string& key,
                                               std::optional<std::vector<long long>> fallback,
                                               long long min_value) {
  if (!has(key) && fallback) {
    read_.insert(key);
    return *fallback;
  }
  YAML::Node value = child(key);
  if (!value || !value.IsSequence() || value.size() == 0) {
    fail(value, key, "expected a non-empty list of integers, got " + describe_node(value));
  }
  std::vector<long long> numbers;
  for (const auto& item : value) {
    long long number = 0;
    if (!item.IsScalar() || !YAML::convert<long long>::decode(item, number)) {
      fail(item, key, "expected an integer, got " + describe_node(item));
    }
    if (number < min_value) {
      fail(item, key,
           "every entry must be >= " + std::to_string(min_value) + " (got " +
               std::to_string(number) + ")");
    }
    numbers.push_back(number);
  }
  return numbers;
}

void MapReader::finish() const {
  std::vector<std::string> known(read_.begin(), read_.end());
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (read_.count(key)) continue;
    std::string message = "unknown key '" + key_path(key) + "'";
    if (auto hint = closest_match(key, known); !hint.empty()) {
      message += " (did you mean '" + hint + "'?)";
    }
    throw InputError(origin_.where(entry.first, key_path(key)) + ": " + message);
  }
}

}  // namespace harness
