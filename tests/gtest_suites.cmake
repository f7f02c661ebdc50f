# Run after a test executable is built (cmake -D EXE=... -D OUT=... -D TIMEOUT=... -D NAME=...
# [-D COSTS=...] -P this file): lists its gtest suites and writes, to OUT, a ctest file with one
# test for each suite COSTS names ("<Suite>:<cost>,...", with that COST), named "<Suite>.*" and
# run as `EXE --gtest_filter=<Suite>.*`, and one test for all the other suites, named
# "NAME.other_suites" and run as `EXE --gtest_filter=-<Suite>.*:...`, with the COST that
# "other_suites:<cost>" in COSTS gives (tests/CMakeLists.txt, gtest_suites).
string(REPLACE "," ";" costs "${COSTS}")
set(costed "")
set(others "")
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
    set(suite ${CMAKE_MATCH_1})
    set(cost "")
    foreach(suite_cost IN LISTS costs)
      if(suite_cost MATCHES "^(.*):([0-9.]+)$")
        if(CMAKE_MATCH_1 STREQUAL suite)
          set(cost ${CMAKE_MATCH_2})
          list(APPEND costed ${suite})
        endif()
      endif()
    endforeach()
    if(cost STREQUAL "")
      list(APPEND others ${suite})
    else()
      string(APPEND tests "add_test([=[${suite}.*]=] \"${EXE}\" [=[--gtest_filter=${suite}.*]=])\n"
                          "set_tests_properties([=[${suite}.*]=] PROPERTIES"
                          " TIMEOUT ${TIMEOUT} COST ${cost})\n")
    endif()
  endif()
endforeach()
set(others_cost "")
foreach(suite_cost IN LISTS costs)
  if(suite_cost MATCHES "^other_suites:([0-9.]+)$")
    set(others_cost " COST ${CMAKE_MATCH_1}")
  endif()
endforeach()
if(others)
  list(JOIN costed ".*:" named)
  set(filter "*")
  if(named)
    set(filter "-${named}.*")
  endif()
  set(name "${NAME}.other_suites")
  string(APPEND tests "add_test([=[${name}]=] \"${EXE}\" [=[--gtest_filter=${filter}]=])\n"
                      "set_tests_properties([=[${name}]=] PROPERTIES"
                      " TIMEOUT ${TIMEOUT}${others_cost})\n")
endif()
if(tests STREQUAL "")
  message(FATAL_ERROR "${EXE} --gtest_list_tests: no suite in\n${listing}")
endif()
foreach(suite_cost IN LISTS costs)
  string(REGEX REPLACE ":[^:]*$" "" suite "${suite_cost}")
  list(FIND costed "${suite}" found)
  if(found EQUAL -1 AND NOT suite STREQUAL "other_suites")
    message(FATAL_ERROR "COSTS names ${suite_cost}: ${EXE} has no suite ${suite}")
  endif()
endforeach()
file(WRITE "${OUT}" "${tests}")
