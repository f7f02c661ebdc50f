// runtime_tests' own main: the process-wide LibTorch settings the rank program makes at its
// start (rank/main.cpp) are made here too, before any test starts a thread, so that the ranks
// these tests run as threads meet the LibTorch a real rank meets.
#include <gtest/gtest.h>

#include "runtime/compat/flight_recorder.h"

int main(int argc, char** argv) {
  runtime::torch_compat::keep_flight_recorder_off();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
