// The CUDA interface of a LibTorch built without CUDA or NCCL: no devices, and a clear refusal
// wherever a GPU is asked for (the harness refuses such specs before launching).
#include <stdexcept>

#include "runtime/device/cuda_support.h"

namespace runtime::cuda {
namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw std::runtime_error(what +
                           " needs a LibTorch built with CUDA and NCCL (this one has "
                           "neither; HARNESS_LIBTORCH=pypi builds against one)");
}

}  // namespace

bool built_with_cuda() { return false; }
int device_count() { return 0; }
std::string device_name(int) { refuse("a CUDA device"); }
void use_device(int) { refuse("a CUDA device"); }
void set_fp32_math(Fp32Math) { refuse("TF32 math"); }
Fp32Math fp32_math() { refuse("TF32 math"); }
bool set_bf16_autocast(bool) { refuse("CUDA autocast"); }
std::unique_ptr<Communicator> make_nccl_communicator(const c10::intrusive_ptr<c10d::Store>&, int,
                                                     int, std::chrono::milliseconds, int) {
  refuse("an NCCL communicator");
}
DeviceMemory peak_memory(int) { refuse("GPU memory"); }
void reset_peak_memory(int) { refuse("GPU memory"); }
void synchronize(int) { refuse("a CUDA device"); }
std::unique_ptr<PhaseClock> make_event_phase_clock(int, int) { refuse("CUDA event timing"); }

}  // namespace runtime::cuda
