# `specbench compare` and `specbench report` on the fixtures in data/: the exit code of each
# verdict, the outputs, and bad files rejected with exit 2 and a message naming the file.
# cmake -DSPECBENCH=<exe> -DDATA=<tests/history/data> -DWORK_DIR=<scratch> -P compare_cli.cmake
cmake_minimum_required(VERSION 3.24)

# expect(<exit code> <regex the output must match> args...)
function(expect rc_expected pattern)
  execute_process(COMMAND "${SPECBENCH}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${rc_expected}")
    message(FATAL_ERROR "specbench ${ARGN}: exit ${rc}, expected ${rc_expected}\n${out}\n${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "specbench ${ARGN}: output does not match '${pattern}'\n${out}\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

foreach(sub compare report nightly)
  expect(0 "Usage" ${sub} --help)
endforeach()

set(B "${DATA}/base.json")
expect(0 "saxpy/cpu/loops/N=1024 +[^\n]*same" compare "${B}" "${DATA}/same.json")
expect(0 "0 slower, 0 faster, 3 same" compare "${B}" "${DATA}/same.json")
expect(1 "saxpy/cpu/loops/N=1024 +[^\n]*SLOWER" compare "${B}" "${DATA}/slower.json")
expect(0 "saxpy/cpu/loops/N=1024 +[^\n]*faster" compare "${B}" "${DATA}/faster.json")
expect(0 "matmul/cpu/loops/M=8,N=8,K=8 +[^\n]*missing" compare "${B}" "${DATA}/faster.json")
# The other way round: matmul is new (and saxpy, 43% slower, regressed).
expect(1 "matmul/cpu/loops/M=8,N=8,K=8 +[^\n]*new" compare "${DATA}/faster.json" "${B}")
expect(1 "saxpy/cpu/omp_simd/N=1024 +[^\n]*FAILED" compare "${B}" "${DATA}/failed.json")
expect(1 "verification failed 1 check" compare "${B}" "${DATA}/failed.json")
# 30% slower but three repetitions a side: the test cannot decide, and says so.
expect(0 "warning: 1 benchmark\\(s\\) have too few repetitions"
       compare "${DATA}/few_reps_base.json" "${DATA}/few_reps.json")
# A 30% slowdown is hidden by a 50% minimum effect.
expect(0 "0 slower" compare "${B}" "${DATA}/slower.json" --min-effect 0.5)

# Markdown and JSON outputs.
expect(1 "SLOWER" compare "${B}" "${DATA}/slower.json" --markdown "${WORK_DIR}/c.md"
       --json "${WORK_DIR}/c.json")
file(READ "${WORK_DIR}/c.md" md)
if(NOT md MATCHES "\\| saxpy/cpu/loops/N=1024 \\|[^\n]*\\*\\*SLOWER\\*\\*")
  message(FATAL_ERROR "compare --markdown: no SLOWER row\n${md}")
endif()
file(READ "${WORK_DIR}/c.json" js)
string(JSON regressed GET "${js}" regressed)
string(JSON slower GET "${js}" counts slower)
string(JSON verdict GET "${js}" benchmarks 0 verdict)
if(NOT regressed OR NOT slower EQUAL 1 OR NOT verdict STREQUAL "slower")
  message(FATAL_ERROR "compare --json: regressed=${regressed} slower=${slower} verdict=${verdict}")
endif()

# "-" puts a format on stdout instead of the table.
execute_process(COMMAND "${SPECBENCH}" compare "${B}" "${DATA}/slower.json" --json -
                RESULT_VARIABLE rc OUTPUT_VARIABLE js)
string(JSON verdict ERROR_VARIABLE json_error GET "${js}" benchmarks 0 verdict)
if(NOT rc EQUAL 1 OR NOT verdict STREQUAL "slower")
  message(FATAL_ERROR "compare --json -: exit ${rc}, verdict '${verdict}' ${json_error}\n${js}")
endif()
expect(0 "^# Benchmark comparison" compare "${B}" "${DATA}/same.json" --markdown -)

# Bad input: exit 2, a message naming the file, never a crash.
foreach(bad wrong_version truncated wrong_type not_results empty)
  expect(2 "${bad}\\.json: error: " compare "${B}" "${DATA}/${bad}.json")
  expect(2 "${bad}\\.json: error: " compare "${DATA}/${bad}.json" "${B}")
  expect(2 "${bad}\\.json: error: " report "${B}" "${DATA}/${bad}.json" --out "${WORK_DIR}/r")
endforeach()
expect(2 "schema_version 99 is not supported" compare "${B}" "${DATA}/wrong_version.json")
expect(2 "truncated or corrupt" compare "${B}" "${DATA}/truncated.json")
expect(2 "no_such\\.json: error: cannot read" compare "${B}" "${DATA}/no_such.json")
expect(2 "new is required" compare "${B}")
expect(2 "data: error: [^\n]*is a folder" compare "${DATA}" "${B}")
expect(2 "--min-effect" compare "${B}" "${B}" --min-effect -1)

# Hostile files (issue 19): a context nesting 150,000 arrays (300 KB; it crashed a recursive
# copy), a device that never ends and a FIFO without a writer (they read until memory ran out,
# or blocked forever) are refused with exit 2 and a message naming the file.
string(REPEAT "[" 150000 open)
string(REPEAT "]" 150000 close)
file(WRITE "${WORK_DIR}/deep.json"
     "{\"schema_version\": 1, \"context\": {\"deep\": ${open}${close}}, \"benchmarks\": []}")
expect(2 "deep\\.json:1:[0-9]+: error: [^\n]*nest deeper than 64 levels" compare "${B}"
       "${WORK_DIR}/deep.json")
expect(2 "deep\\.json:1:[0-9]+: error: " report "${B}" "${WORK_DIR}/deep.json" --out "${WORK_DIR}/r")
if(EXISTS /dev/zero)
  expect(2 "/dev/zero: error: [^\n]*not a regular file" compare "${B}" /dev/zero)
endif()
execute_process(COMMAND mkfifo "${WORK_DIR}/fifo.json" RESULT_VARIABLE fifo_rc)
if(fifo_rc EQUAL 0)
  execute_process(COMMAND "${SPECBENCH}" compare "${B}" "${WORK_DIR}/fifo.json" TIMEOUT 30
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc STREQUAL "2" OR NOT err MATCHES "fifo\\.json: error: [^\n]*a FIFO")
    message(FATAL_ERROR "compare on a FIFO: exit ${rc} (expected 2)\n${err}")
  endif()
endif()

# Control bytes in names (ESC, BEL) are shown escaped in the table, never sent raw.
file(READ "${B}" base_text)
string(ASCII 27 esc)
string(ASCII 7 bel)
string(REPLACE "\"saxpy\"" "\"sax\\u001b[31mpy\\u0007\"" hostile_text "${base_text}")
string(REPLACE "saxpy/" "sax\\u001b[31mpy\\u0007/" hostile_text "${hostile_text}")
file(WRITE "${WORK_DIR}/control.json" "${hostile_text}")
execute_process(COMMAND "${SPECBENCH}" compare "${B}" "${WORK_DIR}/control.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT out MATCHES "sax\\\\x1b\\[31mpy\\\\x07/cpu/loops")
  message(FATAL_ERROR "compare: the escaped name is not in the table (exit ${rc})\n${out}${err}")
endif()
string(FIND "${out}${err}" "${esc}" esc_at)
string(FIND "${out}${err}" "${bel}" bel_at)
if(NOT esc_at EQUAL -1 OR NOT bel_at EQUAL -1)
  message(FATAL_ERROR "compare: a raw control byte reached the terminal\n${out}${err}")
endif()
expect(2 "--out" report "${B}")
