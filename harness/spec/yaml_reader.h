// Validated reading of YAML maps. Every error names where the offending value came from:
// "file:line:column" for values in the spec file, or the --set option that supplied it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/input_error.h"

namespace harness {

class SpecErrors;

// Where the values of a spec tree came from.
class SpecOrigin {
 public:
  explicit SpecOrigin(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  // Records that `dotted_path` (and everything below it) was set elsewhere: on the command
  // line, or by the spec's own quick: block (then at `position` in the file).
  void mark_overridden(const std::string& dotted_path, std::string where_text,
                       std::optional<SourcePosition> position = std::nullopt);
  // The location prefix for an error about `node` found at `dotted_path`.
  std::string where(const YAML::Node& node, const std::string& dotted_path) const;
  // The line and column of `node` when it came from the file (nothing for --set values).
  std::optional<SourcePosition> position(const YAML::Node& node,
                                         const std::string& dotted_path) const;
  // "where: message", with the line and column when the value came from the file.
  InputError error(const YAML::Node& node, const std::string& dotted_path,
                   const std::string& message) const;

  // Where readers record the errors they read past (nullptr: they throw the first one).
  void report_to(SpecErrors* errors) { errors_ = errors; }
  SpecErrors* errors() const { return errors_; }

 private:
  std::string file_;
  struct Override {
    std::string where;
    std::optional<SourcePosition> position;
  };
  // The override owning `dotted_path`, if any.
  const Override* override_of(const std::string& dotted_path) const;

  std::map<std::string, Override> overridden_;
  SpecErrors* errors_ = nullptr;
};

// Reads one YAML map, key by key, checking types and ranges; finish() rejects keys that
// were never read, with a "did you mean" hint. A wrong or missing value is thrown, or, where
// the origin collects errors (SpecOrigin::report_to), recorded: the getter then returns its
// fallback (or the lowest allowed value) and ok() turns false.
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
  // get_double's `exclusive_min` for a value that may be 0 but not below ("must be >= 0").
  static constexpr double kZeroOrMore = -1e-300;
  bool get_bool(const std::string& key, bool fallback);
  std::vector<long long> get_int_list(const std::string& key,
                                      std::optional<std::vector<long long>> fallback,
                                      long long min_value);
  // Each entry > exclusive_min (kZeroOrMore: >= 0).
  std::vector<double> get_double_list(const std::string& key,
                                      std::optional<std::vector<double>> fallback,
                                      double exclusive_min);

  // Reports every key of the map that no get_*/child call asked for.
  void finish();
  // No value of this map was wrong so far: checks across its values may run.
  bool ok() const { return ok_; }

  const std::string& path() const { return path_; }
  const SpecOrigin& origin() const { return origin_; }
  std::string key_path(const std::string& key) const;
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& message) const;
  // Like fail(), but recorded and read past where the origin collects errors.
  void report(const YAML::Node& node, const std::string& key, const std::string& message);
  // An error about the map as a whole ("model: ..." at the map's own position).
  void report_map(const std::string& message);
  // Errors about the map as a whole (report_map, a missing key) point at `node`: the map the
  // spec wrote, where this reader reads one derived from it (harness/spec/mesh_form.h).
  void locate_at(const YAML::Node& node) { located_at_.emplace(node); }

 private:
  // Reads one entry of a list into its second argument: "" where it is good, else why not.
  template <typename T>
  using EntryReader = std::function<std::string(const YAML::Node&, T&)>;
  // A non-empty list whose entries `read_entry` reads; `entries` names them in errors ("integers").
  template <typename T>
  std::vector<T> get_list(const std::string& key, std::optional<std::vector<T>> fallback,
                          std::vector<T> stand_in, const std::string& entries,
                          const EntryReader<T>& read_entry);
  // The key's single value, or nothing once its absence or shape has been reported.
  std::optional<YAML::Node> required(const std::string& key);
  void report(InputError error);

  // Where map-level errors point: node_ itself unless locate_at said otherwise.
  const YAML::Node& map_position() const { return located_at_ ? *located_at_ : node_; }

  YAML::Node node_;
  std::optional<YAML::Node> located_at_;
  std::string path_;
  const SpecOrigin& origin_;
  std::set<std::string> read_;
  bool ok_ = true;
};

// Scalar-text helpers used by the typed getters and by sweep validation.
std::string describe_node(const YAML::Node& node);

}  // namespace harness
