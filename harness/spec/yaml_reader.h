// Validated reading of YAML maps. Every error names where the offending value came from:
// "file:line:column" for values in the spec file, or the --set option that supplied it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace harness {

// Where the values of a spec tree came from.
class SpecOrigin {
 public:
  explicit SpecOrigin(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  // Records that `dotted_path` (and everything below it) was set on the command line.
  void mark_overridden(const std::string& dotted_path, std::string option_text);
  // The value at `dotted_path` comes from the file again (the spec's own quick: block).
  void clear_override(const std::string& dotted_path) { overridden_.erase(dotted_path); }
  // The location prefix for an error about `node` found at `dotted_path`.
  std::string where(const YAML::Node& node, const std::string& dotted_path) const;

 private:
  std::string file_;
  std::map<std::string, std::string> overridden_;
};

// Reads one YAML map, key by key, checking types and ranges; finish() rejects keys that
// were never read, with a "did you mean" hint.
class MapReader {
 public:
  // `path` is the dotted path of the map itself ("" for the document root).
  MapReader(const YAML::Node& node, std::string path, const SpecOrigin& origin);

  bool has(const std::string& key) const;
  YAML::Node child(const std::string& key);  // marks the key as read; may be undefined

  std::string get_string(const std::string& key, std::optional<std::string> fallback,
                         const std::vector<std::string>& allowed = {});
  long long get_int(const std::string& key, std::optional<long long> fallback, long long min_value,
                    long long max_value);
  double get_double(const std::string& key, std::optional<double> fallback, double exclusive_min);
  bool get_bool(const std::string& key, bool fallback);
  std::vector<long long> get_int_list(const std::string& key,
                                      std::optional<std::vector<long long>> fallback,
                                      long long min_value);

  // Throws on any key of the map that no get_*/child call asked for.
  void finish() const;

  const std::string& path() const { return path_; }
  std::string key_path(const std::string& key) const;
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& message) const;

 private:
  YAML::Node required(const std::string& key);

  YAML::Node node_;
  std::string path_;
  const SpecOrigin& origin_;
  std::set<std::string> read_;
};

// Scalar-text helpers used by the typed getters and by sweep validation.
std::string describe_node(const YAML::Node& node);

}  // namespace harness
