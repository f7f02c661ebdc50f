#include "runtime/device/phase_clock.h"

namespace runtime {
namespace {

class CpuPhaseClock : public PhaseClock {
 public:
  explicit CpuPhaseClock(int marks) : marks_(marks) {}
  void mark(int index) override { marks_.at(index) = std::chrono::steady_clock::now(); }
  void finish() override {}
  double elapsed_ms(int from, int to) const override {
    return std::chrono::duration<double, std::milli>(marks_.at(to) - marks_.at(from)).count();
  }
  double at_us(int index) const override {
    return std::chrono::duration<double, std::micro>(marks_.at(index).time_since_epoch()).count();
  }

 private:
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace

std::unique_ptr<PhaseClock> make_cpu_phase_clock(int marks) {
  return std::make_unique<CpuPhaseClock>(marks);
}

}  // namespace runtime
