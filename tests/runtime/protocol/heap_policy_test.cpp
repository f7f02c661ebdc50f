// The ranks' heap policy (run.heap): "retain" keeps freed memory in the heap for the next
// iteration instead of handing it back to the OS.
#include "runtime/protocol/heap_policy.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace {

TEST(HeapPolicy, RetainKeepsAFreedBlockInTheHeap) {
  runtime::apply_heap_policy("retain");
  constexpr size_t kBlock = 16 << 20;  // above glibc's default mmap threshold (128 KiB)
  const struct mallinfo2 before = mallinfo2();
  char* block = static_cast<char*>(std::malloc(kBlock));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlock);
  // From the heap, not a mapping of its own (which free() would unmap).
  EXPECT_LT(mallinfo2().hblkhd, before.hblkhd + kBlock);
  std::free(block);
  const struct mallinfo2 after = mallinfo2();
  EXPECT_GE(after.fordblks, kBlock);              // free in the heap, ready for reuse
  EXPECT_GE(after.arena, before.arena + kBlock);  // and the heap was not trimmed back
}

// A block above glibc's 32 MiB ceiling for the mmap threshold comes from the heap too and stays
// there when freed, so the next one of its size finds its pages already faulted in.
TEST(HeapPolicy, RetainKeepsABlockAboveThirtyTwoMiB) {
  runtime::apply_heap_policy("retain");
  constexpr size_t kBlock = 40 << 20;
  const struct mallinfo2 before = mallinfo2();
  char* block = static_cast<char*>(std::malloc(kBlock));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlock);
  EXPECT_LT(mallinfo2().hblkhd, before.hblkhd + kBlock);  // no mapping of its own
  std::free(block);
  EXPECT_GE(mallinfo2().fordblks, kBlock);
}

TEST(HeapPolicy, ExternalProcessesGetGlibcsVariables) {
  const auto retain = runtime::heap_policy_environment("retain");
  EXPECT_EQ(retain.at("MALLOC_MMAP_THRESHOLD_"), "33554432");
  EXPECT_EQ(retain.at("MALLOC_MMAP_MAX_"), "0");
  EXPECT_EQ(retain.at("MALLOC_TRIM_THRESHOLD_"), "2147483647");
  EXPECT_EQ(retain.at("MALLOC_TOP_PAD_"), "67108864");
  EXPECT_TRUE(runtime::heap_policy_environment("system").empty());
}

TEST(HeapPolicy, RejectsAnUnknownPolicy) {
  try {
    runtime::apply_heap_policy("cache");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "heap policy 'cache': expected retain or system");
  }
  EXPECT_THROW(runtime::heap_policy_environment("cache"), std::invalid_argument);
}

}  // namespace
