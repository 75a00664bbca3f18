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

# The conventions of issue 17: --version, unknown subcommands, selection flags.
function(expect_message rc_expected pattern)
  execute_process(COMMAND "${SPECBENCH}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${rc_expected}" OR NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "specbench ${ARGN}: exit ${rc} (expected ${rc_expected}), output not "
                        "matching '${pattern}':\n${out}\n${err}")
  endif()
endfunction()
expect_message(0 "^specbench [0-9]+\\.[0-9]+\\.[0-9]+" --version)
expect_message(2 "unknown subcommand 'frobnicate'" frobnicate)
expect_message(2 "unknown subcommand 'frobnicate'" --root . frobnicate --help)
expect_message(2 "no variant of the selected kernels and backends matches --variant nope"
               verify saxpy -b cpu --variant nope)
expect_message(2 "not a regular expression" verify saxpy --filter "(")
expect_message(2 "kernel 'saxpy' has no size 'M'" bench saxpy -b cpu --sizes M=5 --no-probes)
expect_message(2 "is not a size from 1 to 2" bench saxpy -b cpu --sizes N=0 --no-probes)
expect_message(2 "different lengths" bench matmul -b cpu --sizes "M=1,2 N=1,2,3" --no-probes)
expect_message(2 "bench values for size" bench matmul -b cpu --sizes M=8 --no-probes)
# The spec's checks at every size point hold at explicit points too: here a negative dividend in
# a shape (the bounds proof relies on it).
expect_message(2 "a dividend in a shape or a range must be at least 0"
               bench maxpool2d -b cpu --sizes "N=1 H=1 W=5" --no-probes)
expect_message(2 "huge" bench --sizes huge)
# verify takes the same points, in place of the spec's verify lists.
expect(2 verify --sizes huge)
expect_message(2 "kernel 'saxpy' has no size 'M'" verify saxpy -b cpu --sizes M=5)
expect_message(2 "verify values for size" verify matmul -b cpu --sizes M=8)
expect_message(0 "saxpy +cpu +omp_simd +N=100003 +seed 1 +pass"
               verify saxpy -b cpu --variant omp_simd --sizes N=100003 -v)
expect_message(2 "format" export nothing.json --format xml)
