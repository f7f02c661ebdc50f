#include "runtime/protocol/fault_injection.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace runtime {

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
      fault.rank = std::stoi(value);
    else if (key == "kind")
      fault.kind = value;
    else if (key == "iteration")
      fault.iteration = std::stoll(value);
    else if (key == "run")
      fault.run = value;
    else
      throw std::invalid_argument("HARNESS_FAULT: unknown key '" + key + "'");
  }
  if (fault.kind != "crash" && fault.kind != "hang" && fault.kind != "exit") {
    throw std::invalid_argument("HARNESS_FAULT: kind must be crash, hang or exit");
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
