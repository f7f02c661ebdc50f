#include "common/json_fields.h"

#include <cmath>

#include "common/input_error.h"
#include "common/json_file.h"
#include "common/text_util.h"

namespace harness {

using nlohmann::json;

namespace {

// What a value is, for "expected X, got Y".
std::string describe(const json& value) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    return "\"" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "\"";
  }
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  return json_text(value);
}

}  // namespace

std::string json_field(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string json_field(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

void JsonFields::fail(const std::string& field, const std::string& what) const {
  throw InputError(file_ + ": " + (field.empty() ? "" : field + ": ") + what);
}

void JsonFields::expect_object(const json& value, const std::string& field) const {
  if (!value.is_object()) fail(field, "expected an object, got " + describe(value));
}

const json& JsonFields::member(const json& object, const std::string& field,
                               const std::string& key) const {
  expect_object(object, field);
  const auto found = object.find(key);
  if (found == object.end()) fail(json_field(field, key), "missing");
  return *found;
}

long long JsonFields::integer(const json& object, const std::string& field, const std::string& key,
                              long long minimum, long long maximum) const {
  const json& value = member(object, field, key);
  // Unsigned values past long long's range would read back as negative: compared as unsigned.
  const bool in_range = value.is_number_integer() &&
                        (value.is_number_unsigned() ? value.get<unsigned long long>() <=
                                                          static_cast<unsigned long long>(maximum)
                                                    : value.get<long long>() <= maximum) &&
                        value.get<long long>() >= minimum;
  if (!in_range) {
    fail(json_field(field, key), "expected an integer in [" + std::to_string(minimum) + ", " +
                                     std::to_string(maximum) + "], got " + describe(value));
  }
  return value.get<long long>();
}

double JsonFields::positive(const json& object, const std::string& field,
                            const std::string& key) const {
  const json& value = member(object, field, key);
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0) {
    fail(json_field(field, key), "expected a positive number, got " + describe(value));
  }
  return value.get<double>();
}

bool JsonFields::boolean(const json& object, const std::string& field,
                         const std::string& key) const {
  const json& value = member(object, field, key);
  if (!value.is_boolean())
    fail(json_field(field, key), "expected true or false, got " + describe(value));
  return value.get<bool>();
}

std::string JsonFields::text(const json& object, const std::string& field,
                             const std::string& key) const {
  const json& value = member(object, field, key);
  if (!value.is_string()) fail(json_field(field, key), "expected a string, got " + describe(value));
  return value.get<std::string>();
}

std::string JsonFields::folder_name(const json& object, const std::string& field,
                                    const std::string& key) const {
  const std::string name = text(object, field, key);
  if (const std::string problem = folder_name_problem(name); !problem.empty()) {
    fail(json_field(field, key), "cannot name a folder: " + problem);
  }
  return name;
}

const json& JsonFields::array(const json& object, const std::string& field, const std::string& key,
                              size_t maximum) const {
  const json& value = member(object, field, key);
  if (!value.is_array()) fail(json_field(field, key), "expected an array, got " + describe(value));
  if (value.size() > maximum) {
    fail(json_field(field, key), "more than " + std::to_string(maximum) + " entries (" +
                                     std::to_string(value.size()) + ")");
  }
  return value;
}

}  // namespace harness
