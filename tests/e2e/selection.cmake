# --variant, --filter and explicit --sizes points on verify and bench, and verify's table (one
# row per variant with the allowed error; one row per check under -v).
# cmake -DSPECBENCH=<exe> -DCACHE=<dir> -DWORK_DIR=<dir> -P selection.cmake
cmake_minimum_required(VERSION 3.24)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run_ok out_var)
  execute_process(COMMAND "${SPECBENCH}" ${ARGN} --cache-dir "${CACHE}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "specbench ${ARGN}: exit ${rc}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# One row per variant: only loops, with its allowed error.
run_ok(out verify saxpy -b cpu --variant loops)
if(NOT out MATCHES "\nsaxpy +cpu +loops +[0-9]+/[0-9]+ +pass")
  message(FATAL_ERROR "verify --variant loops: no per-variant row\n${out}")
endif()
if(out MATCHES "omp_simd")
  message(FATAL_ERROR "verify --variant loops ran omp_simd\n${out}")
endif()
if(NOT out MATCHES "allowed" OR NOT out MATCHES "atol 1\\.00e-07 \\+ rtol 1\\.00e-06 x mag")
  message(FATAL_ERROR "verify: no allowed error beside the error\n${out}")
endif()
string(REGEX MATCHALL "\nsaxpy " rows "\n${out}")
list(LENGTH rows n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "verify: ${n} rows for one variant, expected 1\n${out}")
endif()

# -v: one row per check (5 verify sizes x 5 input sets), selected by a regular expression.
run_ok(out verify saxpy -b cpu --filter "cpu/omp" -v)
string(REGEX MATCHALL "\nsaxpy +cpu +omp_simd " rows "\n${out}")
list(LENGTH rows n)
if(n LESS 25 OR out MATCHES "\nsaxpy +cpu +loops ")
  message(FATAL_ERROR "verify -v --filter cpu/omp: ${n} check rows\n${out}")
endif()

# bench at explicit points, one variant.
run_ok(out bench saxpy -b cpu --variant omp_simd --sizes N=1000,3000 --repetitions 2
       --min-time 0.001 --no-probes --out "${WORK_DIR}/sel.json")
file(READ "${WORK_DIR}/sel.json" doc)
string(JSON count LENGTH "${doc}" benchmarks)
set(sizes "")
set(variants "")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON kernel ERROR_VARIABLE e GET "${doc}" benchmarks ${i} kernel)
  if(e)
    continue()
  endif()
  string(JSON n GET "${doc}" benchmarks ${i} sizes N)
  string(JSON v GET "${doc}" benchmarks ${i} variant)
  list(APPEND sizes ${n})
  list(APPEND variants ${v})
endforeach()
list(REMOVE_DUPLICATES sizes)
list(REMOVE_DUPLICATES variants)
list(SORT sizes)
if(NOT sizes STREQUAL "1000;3000" OR NOT variants STREQUAL "omp_simd")
  message(FATAL_ERROR "bench --sizes N=1000,3000 --variant omp_simd timed sizes '${sizes}' "
                      "and variants '${variants}'")
endif()
