// Which BLAS this process actually runs. Debian's LibTorch is built with BLAS_INFO=generic: its
// matrix products call whatever libblas.so.3 resolves to (the reference BLAS, OpenBLAS or BLIS,
// by update-alternatives or LD_LIBRARY_PATH), a 16x difference in GEMM speed; PyPI's carries
// MKL inside libtorch_cpu.so. Read from the running process (the library its sgemm_ binds to),
// never assumed from what is installed.
#pragma once

#include <string>

namespace runtime {

struct BlasLibrary {
  // "openblas", "blis", "mkl", "reference" (netlib) or "unknown"; Debian's builds by their
  // folder: "openblas-openmp", "openblas-pthread", "blis-openmp", "blis-pthread".
  std::string name;
  std::string path;  // the mapped file (symlinks resolved)
  int threads = 0;   // the library's own thread count where it says (OpenBLAS, BLIS, MKL), else 0
};

// The BLAS mapped into this process. Call after LibTorch is loaded (it is, in harness-rank).
BlasLibrary loaded_blas_library();

// Sets the BLAS library's own thread count (OpenBLAS, BLIS) where it has one; LibTorch's
// set_num_threads covers its OpenMP pool but not a pthread-built BLAS's.
void set_blas_threads(int threads);

}  // namespace runtime
