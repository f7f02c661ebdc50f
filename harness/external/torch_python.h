// The Python whose torch is the rank program's LibTorch (CMake's HARNESS_TORCH_PYTHON, derived
// from where LibTorch is: Debian's /usr/bin/python3, a virtual environment's bin/python; "" for
// an unpacked LibTorch): what an external system's `{torch_python}` names, so that a PyTorch
// peer runs the same torch as the harness's ranks whichever LibTorch the build took.
#pragma once

#include <string>

namespace harness {

std::string torch_python();

}  // namespace harness
