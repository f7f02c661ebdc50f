#include "common/build_info.h"

#include "common/environment_info.h"

namespace harness {

std::string build_description() {
  return std::string("harness ") + HARNESS_VERSION + " (LibTorch " + HARNESS_LIBTORCH_VERSION +
         ", commit " + harness_git_revision() + ")";
}

}  // namespace harness
