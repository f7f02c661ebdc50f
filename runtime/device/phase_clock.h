// When an iteration's phases began and ended, as the device saw them. On the CPU the marks are
// steady-clock readings; on a GPU, events recorded on the rank's stream, read after the
// iteration (a CPU clock there would time the kernel launches, not the kernels).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

namespace runtime {

class PhaseClock {
 public:
  virtual ~PhaseClock() = default;
  // Marks point `index` (0 .. marks-1) as reached now, in the order the work was issued;
  // mark 0 starts an iteration.
  virtual void mark(int index) = 0;
  // Waits until the device reached every mark of the iteration; the readings below are valid
  // from then until the next mark(0).
  virtual void finish() = 0;
  // Milliseconds between two marks of this iteration.
  virtual double elapsed_ms(int from, int to) const = 0;
  // The steady clock's microseconds at mark `index` (on a GPU: the CPU's time at mark 0 plus
  // the device's time since), for the trace.
  virtual double at_us(int index) const = 0;
};

// Steady-clock marks: what the CPU path has always measured.
std::unique_ptr<PhaseClock> make_cpu_phase_clock(int marks);

}  // namespace runtime
