// What this build was made from and against, for `--version`: the project's version, the
// LibTorch the build folder was configured with (CMake's Torch_VERSION; the harness binary
// itself links no LibTorch, its rank program does), and the commit of the checkout.
#pragma once

#include <string>

namespace harness {

// "harness 0.1.0 (LibTorch 1.13.1, commit abc123...)": the commit as harness_git_revision()
// reads it, "-dirty" where the work tree has changes.
std::string build_description();

}  // namespace harness
