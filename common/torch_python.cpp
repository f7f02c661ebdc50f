#include "common/torch_python.h"

namespace harness {

std::string torch_python() { return HARNESS_TORCH_PYTHON; }

}  // namespace harness
