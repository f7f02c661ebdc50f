# The tests of the programs and libraries that link no LibTorch, all labelled torch-free: the
# libraries' unit tests, the end-to-end tests that start no rank, the house rules and the
# scripts' own tests. Included by tests/CMakeLists.txt where HARNESS_TORCH_FREE_TESTS is on;
# scripts/test.sh's later LibTorch passes turn it off and so neither build nor list them (their
# binaries are built from the same sources in the first pass, and a build of them against the
# second LibTorch cost PyPI's pass their links, discovery runs and benchmarks beside its
# LibTorch compiles).

# common/: the leaf library.
add_executable(common_tests common/input_files_test.cpp common/statistics_test.cpp
  common/child_process_test.cpp common/text_pattern_test.cpp common/ports_test.cpp
  common/identifier_checks_test.cpp common/tensor_form_test.cpp)
target_link_libraries(common_tests PRIVATE common GTest::gtest_main)
gtest_discover_tests(common_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS torch-free)

# harness/: specs, launchers, external systems, results, analysis, plots, profiles, commands.
add_executable(harness_tests
  harness/emulation/machine_entry_test.cpp
  harness/emulation/network_plan_test.cpp
  harness/analysis/action_comparison_test.cpp
  harness/analysis/compare_mann_whitney_test.cpp
  harness/analysis/compare_test.cpp
  harness/analysis/sequential_gate_test.cpp
  harness/analysis/shift_interval_test.cpp
  harness/analysis/system_verdicts_test.cpp
  harness/analysis/trace_test.cpp
  harness/study/duration_estimate_test.cpp
  harness/study/simulate_spec_test.cpp
  harness/external/external_test.cpp
  harness/cli/plan_spec_test.cpp
  harness/history/change_points_test.cpp
  harness/history/history_check_test.cpp
  harness/history/history_store_test.cpp
  harness/launch/launcher_test.cpp
  harness/launch/rank_answers_file_test.cpp
  harness/launch/rank_program_test.cpp
  harness/machine/cpu_wake_latency_test.cpp
  harness/machine/machine_cache_test.cpp
  harness/machine/machine_load_test.cpp
  harness/plot/plot_test.cpp
  harness/profile/profile_files_test.cpp
  harness/profile/spmd_costs_file_test.cpp
  harness/profile/estimated_profile_test.cpp
  harness/results/report_test.cpp
  harness/results/rank_placement_test.cpp
  harness/results/results_test.cpp
  harness/spec/mesh_form_test.cpp
  harness/spec/pipeline_plan_source_test.cpp
  harness/spec/spec_test.cpp
)
target_link_libraries(harness_tests PRIVATE harness_cli harness_emulation GTest::gtest_main)
# The change-point detector as a filter, for the test against Apache Otava (e2e/history.sh).
add_executable(change_points_tool harness/history/change_points_tool.cpp)
target_link_libraries(change_points_tool PRIVATE harness_history)
target_compile_definitions(harness_tests PRIVATE
  HARNESS_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data" SIMULATOR_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  HARNESS_REFERENCE_RESULTS="${PROJECT_SOURCE_DIR}/results/reference/ci_regression")
gtest_discover_tests(harness_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS torch-free)

# runtime/ and baselines/ without LibTorch: rank identity, heap policy, pipeline plans, stage
# profile merging, buckets.
add_executable(runtime_protocol_tests
  runtime/device/device_placement_test.cpp
  runtime/protocol/fault_injection_test.cpp
  runtime/protocol/comm_ops_test.cpp
  runtime/protocol/heap_policy_test.cpp
  runtime/protocol/cpu_pinning_test.cpp
  runtime/protocol/rank_identity_test.cpp
  runtime/protocol/traced_iteration_test.cpp
  runtime/protocol/worker_config_test.cpp
  runtime/parallel/device_mesh_test.cpp
  runtime/parallel/spmd_plan_test.cpp
  runtime/pipeline/pipeline_plan_test.cpp
  runtime/pipeline/pipeline_schedule_test.cpp
  runtime/profile/stage_profile_merge_test.cpp
  baselines/ddp/bucket_assignment_test.cpp
  baselines/sharded/shard_layout_test.cpp
)
target_link_libraries(runtime_protocol_tests PRIVATE runtime_protocol baselines_bucketing
  GTest::gtest_main)
target_compile_definitions(runtime_protocol_tests PRIVATE
  HARNESS_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")
gtest_discover_tests(runtime_protocol_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS torch-free)

# The harness alone, without harness-rank beside it: the end-to-end tests that need no rank run
# this copy, so that one that starts a rank fails ("cannot start .../harness-rank") instead of
# passing under the label torch-free, which keeps them out of the second LibTorch's pass.
set(harness_alone ${CMAKE_CURRENT_BINARY_DIR}/harness-alone/harness)
add_custom_command(OUTPUT ${harness_alone}
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:harness> ${harness_alone}
  DEPENDS harness)
add_custom_target(harness_alone ALL DEPENDS ${harness_alone})
# Bad input, generated: 2,000 seeded mutations of specs and profiles, a harness process each;
# its timeout leaves room for a loaded machine.
add_test(NAME e2e_fuzz_inputs
  COMMAND ${CMAKE_COMMAND} -E env FUZZ_SEED=1
          python3 ${CMAKE_CURRENT_SOURCE_DIR}/e2e/fuzz_inputs.py ${harness_alone}
          ${PROJECT_SOURCE_DIR} 2000)
set_tests_properties(e2e_fuzz_inputs PROPERTIES TIMEOUT 300 LABELS torch-free COST 13)
# Bad input, by class and command: every command that reads a path, an output, a name or a
# number, given each bad class of it (a FIFO, a device, a folder, an unwritable place, a name git
# or Markdown would misread, a number out of range); exit 2, one line, nothing changed.
add_test(NAME e2e_bad_commands_exit_2
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/e2e/bad_commands.py ${harness_alone}
          ${PROJECT_SOURCE_DIR})
set_tests_properties(e2e_bad_commands_exit_2 PROPERTIES TIMEOUT 300 LABELS torch-free)
# The published profiles: fetch from local stand-ins, checksums, and the paper specs without
# and with them (each paper spec runs where ../shared/reference has the profiles; all of them
# simulate or plan, so no rank starts).
add_test(NAME e2e_paper_specs
  COMMAND ${CMAKE_COMMAND} -E env HARNESS=${harness_alone}
          bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/paper_specs.sh)
set_tests_properties(e2e_paper_specs PROPERTIES TIMEOUT 300 LABELS torch-free COST 10)
# HiDup's SPMD search from the command line: plan files, the systems beside it, bad input.
add_test(NAME e2e_profile_estimate
  COMMAND ${CMAKE_COMMAND} -E env HARNESS=${harness_alone}
          bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/profile_estimate.sh)
set_tests_properties(e2e_profile_estimate PROPERTIES TIMEOUT 120 LABELS torch-free)
add_test(NAME e2e_llama2_scale
  COMMAND ${CMAKE_COMMAND} -E env HARNESS=${harness_alone}
          bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/llama2_scale.sh)
set_tests_properties(e2e_llama2_scale PROPERTIES TIMEOUT 120 LABELS torch-free)
add_test(NAME e2e_spmd_search
  COMMAND ${CMAKE_COMMAND} -E env HARNESS=${harness_alone}
          bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/spmd_search.sh)
set_tests_properties(e2e_spmd_search PROPERTIES TIMEOUT 300 LABELS torch-free)
add_test(NAME e2e_spmd_search_spec
  COMMAND ${CMAKE_COMMAND} -E env HARNESS=${harness_alone}
          bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/spmd_search_spec.sh)
set_tests_properties(e2e_spmd_search_spec PROPERTIES TIMEOUT 120 LABELS torch-free)
# Emulated machines in a chroot, where namespaces cannot be entered: refused before launching
# (root only; exit 77 = skipped).
add_test(NAME e2e_machines_in_chroot
  COMMAND ${CMAKE_COMMAND} -E env HARNESS=${harness_alone}
          bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/machines_in_chroot.sh)
set_tests_properties(e2e_machines_in_chroot PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
  LABELS torch-free)

# harness history: SQLite end to end, a real PostgreSQL server, the trend site in a real browser,
# and the change points against Apache Otava's.
foreach(test e2e_history:history.sh e2e_history_postgres:history_postgres.sh
        e2e_history_report:history_report.sh e2e_history_otava:history_otava.sh)
  string(REPLACE ":" ";" test "${test}")
  list(GET test 0 name)
  list(GET test 1 script)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -E env HARNESS=${harness_alone}
            CHANGE_POINTS_TOOL=$<TARGET_FILE:change_points_tool>
            bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/${script})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 LABELS torch-free)
endforeach()

add_subdirectory(planner)
add_subdirectory(simulator)

# The house rules: clang-format, no include cycle between top-level folders, a torch-free
# harness binary, no new function of 100+ lines (scripts/check_house.py).
add_test(NAME house_rules
  COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/check_house.py ${CMAKE_BINARY_DIR}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(house_rules PROPERTIES LABELS torch-free)
# The docs' promises: every relative link and repository path in every Markdown file exists, and
# no source comment carries a dated measurement (scripts/check_docs.py).
add_test(NAME docs_links
  COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/check_docs.py ${PROJECT_SOURCE_DIR})
set_tests_properties(docs_links PROPERTIES LABELS torch-free)
# The scripts' own tests, each a script in tests/scripts/ run by its interpreter: the house
# rules' function-length reader on sources written in the test (check_house_test.py); the docs
# check on a repository written in the test (check_docs_test.py); the suite's check for processes
# left behind, on processes started in the test (processes_left_test.sh); the
# emulated studies' diagnostics, bench/emulated/transfer_delays.py and sched_waits.py, on traces
# written in the test (transfer_diagnostics_test.py); the set-up script's package-set choice,
# HARNESS_DEPS, refused before apt is touched (install_deps_choice.sh); PyPI's packages through
# uv, given pip's configuration, and through pip where uv cannot (uv_options.sh); build.sh
# configuring anew a build folder cached against another LibTorch or CUDA compiler
# (stale_configuration.sh); pypi with neither its CUDA toolkit nor an nvcc, refused by build.sh
# before cmake runs (pypi_without_toolkit.sh; exit 77 = skipped); every tracked shell script
# parsing, with no ShellCheck error (scripts_parse.sh); the formatter touching C++ only
# (format_only_cpp.sh); the commit-msg hook on messages written in the test (commit_msg_hook.sh).
foreach(test house_rules_function_lengths:python3:check_house_test.py
        docs_links_rules:python3:check_docs_test.py
        suite_processes_rules:bash:processes_left_test.sh
        bench_transfer_diagnostics:python3:transfer_diagnostics_test.py
        scripts_install_deps_choice:bash:install_deps_choice.sh
        scripts_uv_options:bash:uv_options.sh
        scripts_stale_configuration:bash:stale_configuration.sh
        scripts_pypi_without_toolkit:bash:pypi_without_toolkit.sh
        scripts_parse:bash:scripts_parse.sh
        scripts_format_only_cpp:bash:format_only_cpp.sh
        scripts_commit_msg_hook:bash:commit_msg_hook.sh)
  string(REPLACE ":" ";" test "${test}")
  list(GET test 0 name)
  list(GET test 1 interpreter)
  list(GET test 2 script)
  add_test(NAME ${name} COMMAND ${interpreter} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/${script})
  set_tests_properties(${name} PROPERTIES LABELS torch-free)
endforeach()
set_tests_properties(scripts_pypi_without_toolkit PROPERTIES SKIP_RETURN_CODE 77)
harness_unity(16 common_tests harness_tests runtime_protocol_tests)
