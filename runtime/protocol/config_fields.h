// Reading the worker config's JSON fields: a value of the wrong type, a missing required key or
// a missing object names its key path ("worker config: system.pipeline.stages ..."), for
// worker_config.cpp and the system description (runtime/parallel/parallel_system.cpp) alike.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace runtime::config_fields {

// document[key] as T, or `fallback` when absent; a present value of the wrong type names key.
template <typename T>
T read(const nlohmann::json& document, const std::string& path, const char* key, T fallback) {
  if (!document.contains(key)) return fallback;
  try {
    return document.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument("worker config: " + path + key + " has the wrong type");
  }
}

template <typename T>
T require(const nlohmann::json& document, const std::string& path, const char* key) {
  if (!document.contains(key)) {
    throw std::invalid_argument("worker config: missing " + path + key);
  }
  return read<T>(document, path, key, T{});
}

inline const nlohmann::json& section(const nlohmann::json& document, const std::string& path,
                                     const char* key) {
  if (!document.contains(key) || !document.at(key).is_object()) {
    throw std::invalid_argument("worker config: missing object " + path + key);
  }
  return document.at(key);
}

}  // namespace runtime::config_fields
