#include "runtime/protocol/fault_injection.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace runtime {
namespace {

// A whole non-negative number, all of `value` ("3"; not "3x", "-1" or "").
long long non_negative(const std::string& key, const std::string& value) {
  size_t used = 0;
  long long number = -1;
  try {
    number = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (value.empty() || used != value.size() || number < 0 || !std::isdigit(value[0])) {
    throw std::invalid_argument("HARNESS_FAULT: " + key + " must be a whole number >= 0, got '" +
                                value + "'");
  }
  return number;
}

}  // namespace

std::optional<Fault> parse_fault(const char* text) {
  if (!text || !*text) return std::nullopt;
  Fault fault;
  std::stringstream stream(text);
  std::string field;
  while (std::getline(stream, field, ',')) {
    const auto equals = field.find('=');
    if (equals == std::string::npos)
      throw std::invalid_argument("HARNESS_FAULT: bad field '" + field + "'");
    const std::string key = field.substr(0, equals), value = field.substr(equals + 1);
    if (key == "rank")
      fault.rank = static_cast<int>(std::min<long long>(non_negative(key, value), 1 << 30));
    else if (key == "kind")
      fault.kind = value;
    else if (key == "iteration")
      fault.iteration = non_negative(key, value);
    else if (key == "run")
      fault.run = value;
    else
      throw std::invalid_argument("HARNESS_FAULT: unknown key '" + key + "'");
  }
  if (fault.kind != "crash" && fault.kind != "hang" && fault.kind != "exit") {
    throw std::invalid_argument("HARNESS_FAULT: kind must be crash, hang or exit, got '" +
                                fault.kind + "'");
  }
  if (fault.rank < 0) {
    throw std::invalid_argument("HARNESS_FAULT: rank= is missing (rank=R,kind=K,iteration=I)");
  }
  return fault;
}

void maybe_inject_fault(const std::optional<Fault>& fault, const std::string& run_directory,
                        int rank, long long iteration) {
  if (!fault || fault->rank != rank || fault->iteration != iteration) return;
  if (!fault->run.empty() && run_directory.find(fault->run) == std::string::npos) return;
  std::fprintf(stderr, "HARNESS_FAULT: injecting %s on rank %d at iteration %lld\n",
               fault->kind.c_str(), rank, iteration);
  std::fflush(stderr);
  if (fault->kind == "crash") std::abort();
  if (fault->kind == "exit") std::_Exit(3);
  while (true) pause();  // hang: sleep until killed
}

}  // namespace runtime
