// The precisions a rank can train in (`model.precision`) and their names, apart from
// precision.h's LibTorch side so that files without LibTorch can name them: the rank program's
// command line and the machine's limits, whose translation units then compile the same against
// every LibTorch (and are compiled once, the second LibTorch's build taking them from ccache).
#pragma once

#include <string>

namespace runtime {

enum class Precision { kFp32, kTf32, kBf16 };
Precision parse_precision(const std::string& name);  // fp32 | tf32 | bf16
const char* to_string(Precision precision);

}  // namespace runtime
