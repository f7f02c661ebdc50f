// The Python whose torch is the build's LibTorch (CMake's HARNESS_TORCH_PYTHON, derived from
// where LibTorch is: Debian's /usr/bin/python3, a virtual environment's bin/python; "" for an
// unpacked LibTorch). Torch-free, so that both ask the one answer: `harness-rank version` names
// it, and an external system's `{torch_python}` runs a PyTorch peer on the same torch as the
// harness's ranks.
#pragma once

#include <string>

namespace harness {

std::string torch_python();

}  // namespace harness
