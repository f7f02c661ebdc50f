#include "harness/results/result_side.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool is_results_folder(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path / "manifest.json", error);
}

std::vector<fs::path> sorted_subfolders(const fs::path& path) {
  std::vector<fs::path> folders;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(path, error)) {
    if (entry.is_directory(error)) folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

// Results folders at `path` or one or two levels below it, in name order.
std::vector<fs::path> results_folders_at(const fs::path& path) {
  if (is_results_folder(path)) return {path};
  std::vector<fs::path> found;
  for (const fs::path& child : sorted_subfolders(path)) {
    if (is_results_folder(child)) {
      found.push_back(child);
      continue;
    }
    for (const fs::path& grandchild : sorted_subfolders(child)) {
      if (is_results_folder(grandchild)) found.push_back(grandchild);
    }
  }
  return found;
}

std::string scalar_text(const json& value) { return value.is_null() ? "(none)" : json_text(value); }

// The first place where two documents differ, as "path a vs b"; "" when they are equal.
std::string first_difference(const json& a, const json& b, const std::string& path) {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& item : a.items()) keys.insert(item.key());
    for (const auto& item : b.items()) keys.insert(item.key());
    for (const auto& key : keys) {
      const std::string where = path.empty() ? key : path + "." + key;
      const json none;
      const std::string difference =
          first_difference(a.contains(key) ? a[key] : none, b.contains(key) ? b[key] : none, where);
      if (!difference.empty()) return difference;
    }
    return "";
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string difference =
          first_difference(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!difference.empty()) return difference;
    }
    return "";
  }
  if (a == b) return "";
  return path + " " + scalar_text(a) + " vs " + scalar_text(b);
}

// What must agree for two folders to be runs of one study, part by part: the manifest but for
// its repeats, and every configuration the ranks were given but for which repeat logs the
// bucket layout.
std::vector<std::pair<std::string, json>> study_identity(const ResultSamples& folder) {
  json manifest = manifest_to_json(folder.manifest);
  for (auto& point : manifest["points"]) point.erase("repeats");
  std::vector<std::pair<std::string, json>> parts{{"manifest", manifest}};
  for (const auto& point : folder.points) {
    for (const auto& system : point.systems) {
      json config = system.config;
      if (config.is_object()) config.erase("log_buckets");
      parts.emplace_back(point.point.id + " / " + system.name, config);
    }
  }
  return parts;
}

// "manifest: points[0].iterations 40 vs 20", "p000 / overlap: model.batch_size 8 vs 9"; "" when
// the two studies agree.
std::string identity_difference(const ResultSamples& a, const ResultSamples& b) {
  const auto parts_a = study_identity(a), parts_b = study_identity(b);
  for (size_t i = 0; i < std::min(parts_a.size(), parts_b.size()); ++i) {
    const std::string difference = first_difference(parts_a[i].second, parts_b[i].second, "");
    if (!difference.empty()) return parts_a[i].first + ": " + difference;
  }
  return "";
}

std::string revision_of(const ResultSamples& folder) {
  const json& env = folder.environment;
  if (!env.is_object() || !env.contains("harness_git_revision")) return "";
  return env["harness_git_revision"].is_string() ? env["harness_git_revision"].get<std::string>()
                                                 : json_text(env["harness_git_revision"]);
}

}  // namespace

ResultSide read_result_side(const fs::path& path) {
  if (!fs::is_directory(path)) throw InputError(path.string() + ": no such results folder");
  const std::vector<fs::path> folders = results_folders_at(path);
  if (folders.empty()) {
    throw InputError(path.string() +
                     ": not a results folder of `harness run` (no manifest.json in it or up to "
                     "two levels below)");
  }
  if (folders.size() > static_cast<size_t>(kMaxSideFolders)) {
    throw InputError(path.string() + ": " + std::to_string(folders.size()) +
                     " results folders (at most " + std::to_string(kMaxSideFolders) +
                     " on one side of a comparison)");
  }
  ResultSide side;
  side.path = path;
  for (const fs::path& folder : folders) side.folders.push_back(read_result_samples(folder));
  const ResultSamples& first = side.folders.front();
  for (const ResultSamples& folder : side.folders) {
    const std::string difference = identity_difference(first, folder);
    if (!difference.empty()) {
      throw InputError(path.string() + ": " + folder.directory.string() +
                       " is another study than " + first.directory.string() + " (" + difference +
                       ")");
    }
    if (revision_of(folder) != revision_of(first)) {
      throw InputError(path.string() + ": its folders come from different revisions ('" +
                       revision_of(first) + "' in " + first.directory.string() + ", '" +
                       revision_of(folder) + "' in " + folder.directory.string() + ")");
    }
    if (machine_of(folder) != machine_of(first)) {
      throw InputError(path.string() + ": its folders ran on different machines (" +
                       machine_of(first) + " in " + first.directory.string() + "; " +
                       machine_of(folder) + " in " + folder.directory.string() + ")");
    }
  }
  return side;
}

std::string study_difference(const ResultSide& base, const ResultSide& candidate) {
  return identity_difference(base.folders.front(), candidate.folders.front());
}

std::string machine_of(const ResultSamples& folder) {
  const json& env = folder.environment;
  if (!env.is_object()) return "";
  const auto text = [&](const char* key) {
    if (!env.contains(key)) return std::string("?");
    return env[key].is_string() ? env[key].get<std::string>() : json_text(env[key]);
  };
  return "host " + text("hostname") + ", " + text("cpu_model") + ", " + text("logical_cores") +
         " logical cores";
}

}  // namespace harness
