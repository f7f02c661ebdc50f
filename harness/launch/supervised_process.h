// One program run to its end with its output in a log file, stopped with the harness: it dies
// with this process (even by SIGKILL), and a stop request (SIGINT/SIGTERM to the harness,
// harness/launch/local_launcher.h stop_requested) is passed on to it as SIGTERM, then SIGKILL
// after a grace period. `harness ab` runs each round's study this way.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace harness {

struct SupervisedExit {
  int exit_code = 0;         // 128 + the signal when one ended it; 127 when it could not start
  bool interrupted = false;  // stopped because the harness was asked to stop
};

// `program` is run as named (a path), with this process's environment and `environment` set
// over it. Standard input is /dev/null; standard output and error both go to `log` (created or
// truncated). std::runtime_error when no process can be made.
SupervisedExit run_supervised(const std::string& program, const std::vector<std::string>& args,
                              const std::filesystem::path& log,
                              const std::map<std::string, std::string>& environment = {},
                              double grace_s = 10);

}  // namespace harness
