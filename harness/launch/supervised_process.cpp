#include "harness/launch/supervised_process.h"

#include <chrono>
#include <thread>

#include "common/child_process.h"
#include "harness/launch/local_launcher.h"

namespace harness {

SupervisedExit run_supervised(const std::string& program, const std::vector<std::string>& args,
                              const std::filesystem::path& log,
                              const std::map<std::string, std::string>& environment,
                              double grace_s) {
  ChildSpec spec;
  spec.program = program;
  spec.args = args;
  spec.environment = environment;
  spec.out = ChildStream::to_file(log);
  spec.err = ChildStream::same_as_out();
  ChildProcess child(spec);
  while (true) {
    if (const auto ended = child.poll()) return {ended->code, false};
    // SIGTERM, then SIGKILL once `grace_s` has passed: the child harness stops its ranks on
    // SIGTERM.
    if (stop_requested().load()) return {child.stop(grace_s).code, true};
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace harness
