// Global batch size lists: "32:4096:64" is the published planner's sweep -- the start, then
// every multiple of the step above it up to the end (32, 64, 128, ..., 4096: 65 sizes);
// "128,256,512" lists sizes explicitly; a single number is one size.
#pragma once

#include <string>
#include <vector>

namespace harness::planner {

// InputError with `where` as location prefix on malformed text.
std::vector<int> parse_batch_sizes(const std::string& text, const std::string& where);

}  // namespace harness::planner
