#include "harness/cli/enter_machine_command.h"

#include <CLI/CLI.hpp>

#include "common/input_error.h"
#include "harness/emulation/machine_entry.h"

namespace harness {

void add_enter_machine_command(CLI::App& app) {
  auto* command = app.add_subcommand("enter-machine", "Run a command on an emulated machine")
                      ->prefix_command()
                      ->group("");  // internal: started by the harness, not by its users
  auto machines = std::make_shared<std::string>();
  auto private_folder = std::make_shared<std::string>();
  auto through_shell = std::make_shared<bool>(false);
  command->add_option("--machines", *machines, "ADDRESS=NETNS,... of the emulated machines")
      ->required();
  command->add_option("--private", *private_folder, "A folder of the machine's own (a tmpfs)");
  command->add_flag("--shell", *through_shell, "COMMAND is one line for /bin/sh (an rsh agent)");
  command->callback([=] {
    std::vector<std::string> rest = command->remaining();
    if (rest.size() < 2) throw InputError("enter-machine: expected HOST COMMAND...");
    const MachineEntry entry{parse_machine_list(*machines), *private_folder};
    const EmulatedMachine& machine = find_machine(entry, rest.front());
    exec_on_machine(machine, entry.private_folder, {rest.begin() + 1, rest.end()}, *through_shell);
  });
}

}  // namespace harness
