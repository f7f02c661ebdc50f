# Run after a test executable is built (cmake -D EXE=... -D OUT=... -D TIMEOUT=... -P this file):
# lists its gtest suites and writes, to OUT, a ctest file with one test per suite, named
# "<Suite>.*" and run as `EXE --gtest_filter=<Suite>.*` (tests/CMakeLists.txt, gtest_suites).
execute_process(COMMAND "${EXE}" --gtest_list_tests
  OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE code TIMEOUT 120)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${EXE} --gtest_list_tests: ${code}\n${errors}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(tests "")
foreach(line IN LISTS lines)
  # A suite's line starts in column 0 and ends in a dot, before a type parameter's comment
  # ("AllModes/ReducerEquivalence."); its tests' lines are indented.
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    string(APPEND tests "add_test([=[${CMAKE_MATCH_1}.*]=] \"${EXE}\" "
                        "[=[--gtest_filter=${CMAKE_MATCH_1}.*]=])\n"
                        "set_tests_properties([=[${CMAKE_MATCH_1}.*]=] PROPERTIES TIMEOUT ${TIMEOUT})\n")
  endif()
endforeach()
if(tests STREQUAL "")
  message(FATAL_ERROR "${EXE} --gtest_list_tests: no suite in\n${listing}")
endif()
file(WRITE "${OUT}" "${tests}")
