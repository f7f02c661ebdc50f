#include "harness/spec/published_profiles.h"

#include <cstdlib>
#include <filesystem>

namespace harness {

std::string published_profiles_folder() {
  const char* folder = std::getenv("HARNESS_PROFILES");
  return folder != nullptr && *folder != '\0' ? folder : "profiles/published";
}

std::string resolve_profile_path(const std::string& written) {
  const std::string placeholder = kProfilesPlaceholder;
  if (written.rfind(placeholder, 0) != 0) return written;
  return published_profiles_folder() + written.substr(placeholder.size());
}

std::string profile_problem(const std::string& written) {
  const std::string path = resolve_profile_path(written);
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) return "";
  if (std::filesystem::exists(path, error)) return "'" + path + "' is not a regular file";
  return missing_profile_reason(written);
}

std::string missing_profile_reason(const std::string& written) {
  const std::string path = resolve_profile_path(written);
  if (path == written) return "cannot open '" + path + "'";
  return "cannot open '" + path + "': the published DAPPLE profiles are not in " +
         published_profiles_folder() +
         " (fetch them: scripts/fetch-profiles.sh, or set HARNESS_PROFILES to their folder)";
}

}  // namespace harness
