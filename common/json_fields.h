// Typed reads of the fields of a JSON document that a file holds (a manifest, a status, a
// summary read back): each value checked for its type and range, every failure an InputError
// naming the file and the field, "FILE: points[2].world_size: expected an integer in
// [1, 4096], got -2". A results folder is input like a spec: its numbers have a spec's limits.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <utility>

namespace harness {

class JsonFields {
 public:
  explicit JsonFields(std::string file) : file_(std::move(file)) {}

  // `object[key]`, where `field` is the path of `object` ("" for the document itself).
  const nlohmann::json& member(const nlohmann::json& object, const std::string& field,
                               const std::string& key) const;
  long long integer(const nlohmann::json& object, const std::string& field, const std::string& key,
                    long long minimum, long long maximum) const;
  // A finite number above 0.
  double positive(const nlohmann::json& object, const std::string& field,
                  const std::string& key) const;
  bool boolean(const nlohmann::json& object, const std::string& field,
               const std::string& key) const;
  std::string text(const nlohmann::json& object, const std::string& field,
                   const std::string& key) const;
  // A text that names a folder (common/text_util.h's folder_name_problem).
  std::string folder_name(const nlohmann::json& object, const std::string& field,
                          const std::string& key) const;
  // An array of at most `maximum` entries.
  const nlohmann::json& array(const nlohmann::json& object, const std::string& field,
                              const std::string& key, size_t maximum) const;
  // The document must be an object.
  void expect_object(const nlohmann::json& value, const std::string& field) const;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const;

 private:
  std::string file_;
};

// "points[2]" from "points" and 2; "world_size" from "" and "world_size".
std::string json_field(const std::string& parent, const std::string& key);
std::string json_field(const std::string& parent, size_t index);

}  // namespace harness
