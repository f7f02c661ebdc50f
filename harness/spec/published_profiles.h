// Where the DAPPLE planner's published profiles are: the planner and simulator specs name
// them as "{profiles}/vgg19/graph.txt", resolved against one setting, so that a fresh clone
// works once scripts/fetch-profiles.sh has fetched them and a machine that keeps them
// elsewhere says so once.
#pragma once

#include <string>

namespace harness {

// "{profiles}": the placeholder a spec's profile path may start with.
inline constexpr const char* kProfilesPlaceholder = "{profiles}";

// $HARNESS_PROFILES, or profiles/published (relative to the working directory, like every
// path in a spec: run from the repository root).
std::string published_profiles_folder();

// `written` with a leading {profiles} replaced by that folder; any other path as it is.
std::string resolve_profile_path(const std::string& written);

// Why the profile written as `written` cannot be opened, in one line without location: for a
// published profile, the command that fetches them.
std::string missing_profile_reason(const std::string& written);

// Why the profile written as `written` cannot be read, or "": it must be a regular file (a FIFO
// would block its open, a device never end); missing_profile_reason where there is none.
std::string profile_problem(const std::string& written);

}  // namespace harness
