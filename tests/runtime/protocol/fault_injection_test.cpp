// HARNESS_FAULT's value read whole: a malformed one is named, never half-read (the harness
// refuses it before launching, harness/cli/run_command.cpp).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "runtime/protocol/fault_injection.h"
#include "tests/test_util.h"

namespace {

std::string error_of(const char* text) {
  return harness_test::thrown_message<std::invalid_argument>([&] { runtime::parse_fault(text); });
}

TEST(FaultInjection, AWellFormedValueIsReadWhole) {
  EXPECT_EQ(runtime::parse_fault(nullptr), std::nullopt);
  EXPECT_EQ(runtime::parse_fault(""), std::nullopt);
  const auto fault = runtime::parse_fault("rank=1,kind=hang,iteration=3,run=p001");
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->rank, 1);
  EXPECT_EQ(fault->kind, "hang");
  EXPECT_EQ(fault->iteration, 3);
  EXPECT_EQ(fault->run, "p001");
}

TEST(FaultInjection, MalformedValuesAreNamed) {
  EXPECT_EQ(error_of("garbage"), "HARNESS_FAULT: bad field 'garbage'");
  EXPECT_EQ(error_of("rank=x,kind=crash"),
            "HARNESS_FAULT: rank must be a whole number >= 0, got 'x'");
  EXPECT_EQ(error_of("rank=1,kind=crash,iteration=3x"),
            "HARNESS_FAULT: iteration must be a whole number >= 0, got '3x'");
  EXPECT_EQ(error_of("rank=-1,kind=crash"),
            "HARNESS_FAULT: rank must be a whole number >= 0, got '-1'");
  EXPECT_EQ(error_of("rank=1,kind=boom"),
            "HARNESS_FAULT: kind must be crash, hang or exit, got 'boom'");
  EXPECT_EQ(error_of("kind=exit"), "HARNESS_FAULT: rank= is missing (rank=R,kind=K,iteration=I)");
  EXPECT_EQ(error_of("rank=0,kind=exit,when=now"), "HARNESS_FAULT: unknown key 'when'");
}

}  // namespace
