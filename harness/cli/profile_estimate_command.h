// `harness profile estimate`: a decoder's layer profile computed from its shapes on a named
// device (harness/profile/estimated_profile.h), for simulating shapes and clusters the harness
// cannot run.
#pragma once

#include <CLI/CLI.hpp>

namespace harness {

void add_profile_estimate_command(CLI::App& profile);

}  // namespace harness
