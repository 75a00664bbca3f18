# The static facts of the CUDA kernels (ptxas's report, the launch block size, the occupancy)
# reach `build --facts` and the results file, and survive the module cache: build softmax's cuda
# module in a scratch cache and check every kernel's row on sm_80 and sm_90; build again (a cache
# hit) and get the same rows; replace the facts file with one for another module and see the
# entry rebuilt with the same rows; then `bench` (skipped without a GPU) records them as
# "kernel_facts". Needs nvcc, no GPU.
#
# cmake -DSPECBENCH=<exe> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -P kernel_facts.cmake
cmake_minimum_required(VERSION 3.24)
foreach(v SPECBENCH SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "kernel_facts.cmake: -D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(cache "${WORK_DIR}/cache")

function(build_facts expect_in_err)
  execute_process(
    COMMAND "${SPECBENCH}" build softmax --backend cuda --facts --root "${SOURCE_DIR}"
            --cache-dir "${cache}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "build exited ${rc}\n${out}\n${err}")
  endif()
  if(NOT err MATCHES "${expect_in_err}")
    message(FATAL_ERROR "build's progress does not match '${expect_in_err}':\n${err}")
  endif()
  # The rows: kernel, backend, variant, function, arch, regs, smem, stack, spills, block,
  # occupancy, only the lines of the table.
  string(REGEX MATCHALL "softmax +cuda +[^\n]*" rows "${out}")
  set(rows "${rows}" PARENT_SCOPE)
endfunction()

build_facts("nvcc softmax \\(cuda\\) [0-9]")
set(first "${rows}")
list(LENGTH rows n)
# softmax's cuda variants launch 12 kernels (4 + 4 + 2 + 2), each compiled for sm_80 and sm_90.
if(NOT n EQUAL 24)
  message(FATAL_ERROR "expected 24 rows (12 kernels x 2 architectures), got ${n}:\n${rows}")
endif()
foreach(arch sm_80 sm_90)
  foreach(fn sb_thread_per_output_s0 sb_grid_stride_s3 sb_warp_per_row_s0_rows
             sb_block_per_row_s0_rows_global)
    set(found "")
    foreach(row IN LISTS rows)
      if(row MATCHES " ${fn} +${arch} ")
        set(found "${row}")
      endif()
    endforeach()
    if(NOT found)
      message(FATAL_ERROR "no row for ${fn} on ${arch}:\n${rows}")
    endif()
    # regs, smem, stack, spills, block 256 (the strategies' default), an occupancy in percent.
    if(NOT found MATCHES
       " ${arch} +([0-9]+) +([0-9]+) +([0-9]+) +([0-9]+)/([0-9]+) +256 +(≤ )?([0-9.]+)% \\(([a-z+]+)\\)")
      message(FATAL_ERROR "row of ${fn} on ${arch} is not plausible: ${found}")
    endif()
    set(regs ${CMAKE_MATCH_1})
    set(pct ${CMAKE_MATCH_7})
    if(regs LESS 4 OR regs GREATER 255)
      message(FATAL_ERROR "${fn} on ${arch}: ${regs} registers: ${found}")
    endif()
    if(pct LESS_EQUAL 0 OR pct GREATER 100)
      message(FATAL_ERROR "${fn} on ${arch}: occupancy ${pct}%: ${found}")
    endif()
  endforeach()
endforeach()
# The row kernel staging rows in shared memory says its occupancy is an upper bound; the block
# reduction has 32 bytes of static shared memory.
string(REGEX MATCH "sb_block_per_row_s0_rows +sm_80 +[0-9]+ +32 [^\n]*≤ [^\n]*dynamic shared"
       staged "${first}")
if(NOT staged)
  message(FATAL_ERROR "sb_block_per_row_s0_rows on sm_80: no static shared memory or no upper "
                      "bound:\n${first}")
endif()

# A cache hit gives the same facts.
build_facts("nvcc softmax \\(cuda\\) cached")
if(NOT rows STREQUAL first)
  message(FATAL_ERROR "the facts from the cache differ:\n${rows}\nfirst:\n${first}")
endif()

# A facts file for another module is not trusted: the entry is rebuilt, with the same facts.
file(GLOB facts_files "${cache}/softmax-cuda-*.so.facts")
list(LENGTH facts_files nf)
if(NOT nf EQUAL 1)
  message(FATAL_ERROR "expected one facts file in ${cache}, found ${nf}")
endif()
file(READ "${facts_files}" text)
string(REGEX REPLACE "\"module\": \"fnv1a64 [0-9a-f]+" "\"module\": \"fnv1a64 0000000000000000"
       text "${text}")
file(WRITE "${facts_files}" "${text}")
build_facts("cached module was rebuilt: its facts file [^\n]*another module")
if(NOT rows STREQUAL first)
  message(FATAL_ERROR "the facts after the rebuild differ:\n${rows}\nfirst:\n${first}")
endif()

# The results file records them (cuda is skipped without a GPU; the facts are the build's).
execute_process(
  COMMAND "${SPECBENCH}" bench softmax --backend cuda --sizes verify --repetitions 1 --min-time 0.01
          --no-probes --out "${WORK_DIR}/results.json" --root "${SOURCE_DIR}" --cache-dir "${cache}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT EXISTS "${WORK_DIR}/results.json")
  message(FATAL_ERROR "bench wrote no results (exit ${rc})\n${out}\n${err}")
endif()
file(READ "${WORK_DIR}/results.json" doc)
string(JSON nk LENGTH "${doc}" kernel_facts)
if(NOT nk EQUAL 24)
  message(FATAL_ERROR "results: ${nk} kernel_facts entries, expected 24")
endif()
math(EXPR last "${nk} - 1")
set(seen_spill_free FALSE)
foreach(i RANGE ${last})
  string(JSON fn GET "${doc}" kernel_facts ${i} function)
  string(JSON arch GET "${doc}" kernel_facts ${i} arch)
  string(JSON regs GET "${doc}" kernel_facts ${i} registers)
  string(JSON block GET "${doc}" kernel_facts ${i} block_threads)
  string(JSON occ GET "${doc}" kernel_facts ${i} occupancy)
  string(JSON variant GET "${doc}" kernel_facts ${i} variant)
  if(NOT arch MATCHES "^sm_(80|90)$" OR regs LESS 4 OR NOT block EQUAL 256 OR
     NOT fn MATCHES "^sb_${variant}_s[0-9]")
    message(FATAL_ERROR "results: kernel_facts[${i}] is not plausible: ${fn} ${variant} ${arch} "
                        "${regs} registers, block ${block}")
  endif()
  if(occ LESS_EQUAL 0 OR occ GREATER 1)
    message(FATAL_ERROR "results: kernel_facts[${i}] ${fn}: occupancy ${occ}")
  endif()
endforeach()
message(STATUS "24 rows, from the compile, the cache and a rebuild, and in the results")
