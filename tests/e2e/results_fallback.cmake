# `bench --out` into a folder that cannot be written (issue 19): the run's measurements land in
# the fallback file ($TMPDIR/specbench-<name>), the message says why (errno) and where, and the
# exit code is 1; when no fallback can be written either, the document goes to stdout.
# cmake -DSPECBENCH=<exe> -DCACHE=<module cache> -DWORK_DIR=<scratch> -P results_fallback.cmake
cmake_minimum_required(VERSION 3.24)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/tmp")
set(bench --root ${SOURCE_DIR} bench vector_add --backend cpu --sizes verify --repetitions 1 --min-time 0.0001
          --no-probes --cache-dir "${CACHE}")

function(check_results file)
  file(READ "${file}" js)
  string(JSON n ERROR_VARIABLE json_error LENGTH "${js}" benchmarks)
  if(json_error OR n LESS 1)
    message(FATAL_ERROR "${file}: no measurements (${json_error})\n${js}")
  endif()
endfunction()

# 1. The folder asked for is a file: even root cannot create it (ENOTDIR).
file(WRITE "${WORK_DIR}/not-a-folder" "")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "TMPDIR=${WORK_DIR}/tmp" "${SPECBENCH}" ${bench}
                        --out "${WORK_DIR}/not-a-folder/run.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "bench --out into a file: exit ${rc}, expected 1\n${out}\n${err}")
endif()
if(NOT err MATCHES "not-a-folder/run\\.json: error: [^\n]*Not a directory")
  message(FATAL_ERROR "bench: the error does not say why\n${err}")
endif()
if(NOT err MATCHES "written to [^\n]*/tmp/specbench-run\\.json instead")
  message(FATAL_ERROR "bench: the fallback is not named\n${err}")
endif()
check_results("${WORK_DIR}/tmp/specbench-run.json")
if(NOT EXISTS "${WORK_DIR}/tmp/specbench-run.md")
  message(FATAL_ERROR "bench: no summary beside the fallback results")
endif()

# 2. A read-only folder (not for root, whom permissions do not stop).
file(MAKE_DIRECTORY "${WORK_DIR}/read-only")
file(CHMOD "${WORK_DIR}/read-only" DIRECTORY_PERMISSIONS OWNER_READ OWNER_EXECUTE)
file(TOUCH "${WORK_DIR}/read-only/probe")
if(NOT EXISTS "${WORK_DIR}/read-only/probe")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "TMPDIR=${WORK_DIR}/tmp" "${SPECBENCH}"
                          ${bench} --out "${WORK_DIR}/read-only/ro.json"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "ro\\.json: error: [^\n]*Permission denied")
    message(FATAL_ERROR "bench --out read-only: exit ${rc}\n${out}\n${err}")
  endif()
  check_results("${WORK_DIR}/tmp/specbench-ro.json")
endif()
file(CHMOD "${WORK_DIR}/read-only" DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)

# 3. No fallback either ($TMPDIR a file, the current folder /proc): the JSON is on stdout.
execute_process(COMMAND ${CMAKE_COMMAND} -E env "TMPDIR=${WORK_DIR}/not-a-folder" "${SPECBENCH}"
                        ${bench} --out "${WORK_DIR}/not-a-folder/run.json"
                WORKING_DIRECTORY /proc
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "could not be written anywhere")
  message(FATAL_ERROR "bench with no fallback: exit ${rc}\n${out}\n${err}")
endif()
string(REGEX MATCH "----- specbench results JSON -----\n(.*)\n----- end of specbench results JSON"
       found "${out}")
string(JSON n ERROR_VARIABLE json_error LENGTH "${CMAKE_MATCH_1}" benchmarks)
if(NOT found OR json_error OR n LESS 1)
  message(FATAL_ERROR "bench with no fallback: no results JSON on stdout\n${out}")
endif()
