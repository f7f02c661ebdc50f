#include "runtime/machine/blas_library.h"

#include <dlfcn.h>

#include <filesystem>

namespace runtime {
namespace {

// What implementation a library that defines sgemm_ is: asked of the library itself (and what
// it links: Debian's OpenBLAS libblas.so.3 is a thin front of libopenblas.so.0), not of its
// name (Debian's BLIS libblas.so.3 is a copy of libblis under the reference BLAS's name).
std::string blas_kind(void* handle) {
  if (dlsym(handle, "openblas_get_config") != nullptr) return "openblas";
  // MKL before BLIS: it has the same CBLAS extensions. PyPI's LibTorch links MKL into
  // libtorch_cpu.so, which exports its service names (MKL_Get_Version_String) but not
  // mkl_get_version.
  if (dlsym(handle, "MKL_Get_Version_String") != nullptr ||
      dlsym(handle, "mkl_get_version") != nullptr) {
    return "mkl";
  }
  // BLIS's extensions of the CBLAS interface; Debian's BLIS exports no bli_* names.
  if (dlsym(handle, "cblas_cgemm_batch") != nullptr) return "blis";
  return "reference";
}

template <typename Function>
Function find_symbol(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

BlasLibrary loaded_blas_library() {
  BlasLibrary found{"unknown", "", 0};
  // The library LibTorch's sgemm_ call binds to: the first in the process's lookup order
  // that defines it (LAPACK from another implementation may be mapped as well).
  Dl_info info{};
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  if (sgemm != nullptr && dladdr(sgemm, &info) != 0 && info.dli_fname != nullptr) {
    std::error_code error;
    const auto real = std::filesystem::canonical(info.dli_fname, error);
    found.path = error ? info.dli_fname : real.string();
    if (void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
      found.name = blas_kind(handle);
      dlclose(handle);
    }
    // Debian installs each build in its own folder (openblas-openmp, blis-pthread, ...).
    const std::string folder = std::filesystem::path(found.path).parent_path().filename();
    if (folder.rfind(found.name, 0) == 0) found.name = folder;
  }
  if (found.name.rfind("openblas", 0) == 0) {
    if (auto get = find_symbol<int (*)()>("openblas_get_num_threads")) found.threads = get();
  } else if (found.name == "mkl") {
    if (auto get = find_symbol<int (*)()>("mkl_get_max_threads")) found.threads = get();
  } else if (found.name.rfind("blis", 0) == 0) {
    if (auto get = find_symbol<long (*)()>("bli_thread_get_num_threads")) {
      found.threads = static_cast<int>(get());
    }
  }
  return found;
}

void set_blas_threads(int threads) {
  if (auto set = find_symbol<void (*)(int)>("openblas_set_num_threads")) set(threads);
  if (auto set_blis = find_symbol<void (*)(long)>("bli_thread_set_num_threads")) set_blis(threads);
}

}  // namespace runtime
