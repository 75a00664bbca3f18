# `gen` stages the whole run (issue 19, defect 9): in a scratch root holding every spec and a
# copy of generated/,
#   1. the first kernel's cpu file is made stale and the last kernel's cpu folder is replaced by
#      a plain file, so that writing one of the last files fails: gen exits 2 and nothing under
#      the root changed (the stale file was not rewritten, no temporary is left);
#   2. temporaries of killed runs (`<file>.tmp.<pid>` of a process that is gone) are removed by
#      the next gen, and one whose process is alive (pid 1) is kept.
# cmake -DSPECBENCH=<exe> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -P gen_staged.cmake
cmake_minimum_required(VERSION 3.24)

set(root ${WORK_DIR}/root)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${root})
file(COPY ${SOURCE_DIR}/specs ${SOURCE_DIR}/generated DESTINATION ${root})

# Every path under the root, with each file's SHA-256.
function(snapshot out)
  file(GLOB_RECURSE paths LIST_DIRECTORIES true RELATIVE ${root} ${root}/*)
  list(SORT paths)
  set(s "")
  foreach(p IN LISTS paths)
    if(IS_DIRECTORY ${root}/${p})
      string(APPEND s "d ${p}\n")
    else()
      file(SHA256 ${root}/${p} h)
      string(APPEND s "f ${p} ${h}\n")
    endif()
  endforeach()
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

function(gen expected_rc)
  execute_process(COMMAND ${SPECBENCH} --root ${root} gen RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc STREQUAL "${expected_rc}")
    message(FATAL_ERROR "gen: exit ${rc}, expected ${expected_rc}\n${out}\n${err}")
  endif()
  set(gen_out "${out}${err}" PARENT_SCOPE)
endfunction()

file(GLOB specs RELATIVE ${root}/specs ${root}/specs/*.yaml)
list(SORT specs)
list(GET specs 0 first)
list(GET specs -1 last)
string(REPLACE ".yaml" "" first ${first})
string(REPLACE ".yaml" "" last ${last})
if(first STREQUAL last OR NOT EXISTS ${root}/generated/${last}/cpu)
  message(FATAL_ERROR "need two specs with cpu variants, found ${first} and ${last}")
endif()

# 1. An I/O error on a late file leaves everything as it was.
file(WRITE ${root}/generated/${first}/cpu/${first}.cpp "stale\n")
file(REMOVE_RECURSE ${root}/generated/${last}/cpu)
file(WRITE ${root}/generated/${last}/cpu "a file where gen needs a folder\n")
snapshot(before)
gen(2)
if(NOT gen_out MATCHES "cannot (write the file|create folder)")
  message(FATAL_ERROR "gen did not name the failed write:\n${gen_out}")
endif()
snapshot(after)
if(NOT before STREQUAL after)
  message(FATAL_ERROR "a failed gen changed the root:\n--- before\n${before}\n--- after\n${after}")
endif()
file(READ ${root}/generated/${first}/cpu/${first}.cpp kept)
if(NOT kept STREQUAL "stale\n")
  message(FATAL_ERROR "a failed gen rewrote ${first}.cpp")
endif()

# 2. Stale temporaries of killed runs are cleaned; a live process's temporary is kept.
file(REMOVE ${root}/generated/${last}/cpu)
set(dead ${root}/generated/${first}/cpu/${first}.cpp.tmp.999999999)
set(deeper ${root}/generated/${last}/mojo.tmp.999999998)
set(alive ${root}/generated/${first}/${first}.notes.tmp.1)
file(WRITE ${dead} "half-written\n")
file(WRITE ${deeper} "half-written\n")
file(WRITE ${alive} "another gen is writing this\n")
gen(0)
if(EXISTS ${dead} OR EXISTS ${deeper})
  message(FATAL_ERROR "gen left the temporaries of a killed run:\n${gen_out}")
endif()
if(NOT EXISTS ${alive})
  message(FATAL_ERROR "gen removed the temporary of a live process (pid 1)")
endif()
if(NOT gen_out MATCHES "removed 2 stale temporary files")
  message(FATAL_ERROR "gen did not report the stale temporaries it removed:\n${gen_out}")
endif()
file(REMOVE ${alive})
execute_process(COMMAND ${SPECBENCH} --root ${root} gen --check RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generated/ is not up to date after gen:\n${out}\n${err}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
