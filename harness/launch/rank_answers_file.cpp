#include "harness/launch/rank_answers_file.h"

#include <exception>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/json_file.h"

namespace harness {

namespace {

// The file's entries; none where it is missing, unreadable or not this format.
nlohmann::json kept_entries(const std::filesystem::path& file) {
  try {
    nlohmann::json kept = read_json_file(file);
    if (kept.is_object() && kept.contains("rank_programs") && kept["rank_programs"].is_array()) {
      return std::move(kept["rank_programs"]);
    }
  } catch (const std::exception&) {  // missing or malformed: nothing kept
  }
  return nlohmann::json::array();
}

}  // namespace

bool adopt_kept_answers(RankProgram& rank_program, const std::filesystem::path& file) {
  for (const nlohmann::json& entry : kept_entries(file)) {
    if (rank_program.adopt_answers(entry)) return true;
  }
  return false;
}

void keep_answers(const RankProgram& rank_program, const std::filesystem::path& file) {
  nlohmann::json mine = rank_program.answers();
  const nlohmann::json& holds_for = mine.at("holds_for");
  if (holds_for.is_null()) return;  // the program cannot be read: nothing would ever hold
  nlohmann::json entries = nlohmann::json::array({mine});
  for (nlohmann::json& entry : kept_entries(file)) {
    if (entries.size() == kKeptRankPrograms) break;
    if (entry.is_object() && entry.value("holds_for", nlohmann::json()) != holds_for) {
      entries.push_back(std::move(entry));
    }
  }
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  write_file_atomic(file, json_text({{"rank_programs", std::move(entries)}}, 2) + "\n");
}

}  // namespace harness
