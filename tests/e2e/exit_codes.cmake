# Exit codes of the command line: 0 for help, 2 for user errors (bad flag, bad value, missing
# subcommand), with a message and no crash.
# cmake -DSPECBENCH=<exe> -P exit_codes.cmake
cmake_minimum_required(VERSION 3.24)

function(expect rc_expected)
  execute_process(COMMAND "${SPECBENCH}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${rc_expected}")
    message(FATAL_ERROR "specbench ${ARGN}: exit ${rc}, expected ${rc_expected}\n${out}\n${err}")
  endif()
  if(NOT rc_expected EQUAL 0 AND "${err}" STREQUAL "")
    message(FATAL_ERROR "specbench ${ARGN}: exit ${rc} without a message on stderr")
  endif()
endfunction()

expect(0 --help)
foreach(sub gen build verify bench run list)
  expect(0 ${sub} --help)
endforeach()
expect(2)
expect(2 --no-such-flag)
expect(2 frobnicate)
expect(2 verify --seeds 0)
expect(2 bench --sizes huge)
expect(2 bench --repetitions x)
expect(2 verify --root /nonexistent/specbench/root)
expect(2 build --cuda-arch 9x)
expect(2 gen --dump-ir nowhere)
