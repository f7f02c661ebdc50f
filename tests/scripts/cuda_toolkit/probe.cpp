// Prints the CUDA and NCCL versions this program was compiled against (the headers of the toolkit
// the build found) and the GPUs the linked torch_cuda sees, as "key value" lines.
#include <c10/cuda/CUDAFunctions.h>
#include <cuda.h>
#include <nccl.h>

#include <iostream>

int main() {
  std::cout << "cuda_version " << CUDA_VERSION << "\n"
            << "nccl_version " << NCCL_VERSION_CODE << "\n"
            << "cuda_devices " << static_cast<int>(c10::cuda::device_count()) << "\n";
  return 0;
}
