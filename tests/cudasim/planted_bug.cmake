# A bug planted by hand in a generated CUDA file is what cudasim simulates, and it is caught:
# copy one kernel into a scratch root, verify under cudasim (pass), turn its bounds guard
# `sb_t >= sb_total` into `sb_t > sb_total` (one thread too many), verify again: it must fail
# with an out-of-bounds report naming the kernel.
#
# cmake -DSPECBENCH=<exe> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -DKERNEL=<name> -P planted_bug.cmake
cmake_minimum_required(VERSION 3.24)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/specs" "${WORK_DIR}/generated")
file(COPY "${SOURCE_DIR}/specs/${KERNEL}.yaml" DESTINATION "${WORK_DIR}/specs")
file(COPY "${SOURCE_DIR}/generated/${KERNEL}" DESTINATION "${WORK_DIR}/generated")
set(src "${WORK_DIR}/generated/${KERNEL}/cuda/${KERNEL}.cu")

function(verify expect_rc)
  execute_process(
    COMMAND "${SPECBENCH}" verify ${KERNEL} --backend cudasim --seeds 1 --root "${WORK_DIR}"
            --cache-dir "${WORK_DIR}/cache"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "verify exited ${rc}, expected ${expect_rc}\n${out}\n${err}")
  endif()
  set(verify_out "${out}\n${err}" PARENT_SCOPE)
endfunction()

verify(0)

file(READ "${src}" text)
string(FIND "${text}" "if (sb_t >= sb_total) {" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${src} has no bounds guard to mutate")
endif()
string(REPLACE "if (sb_t >= sb_total) {" "if (sb_t > sb_total) {" text "${text}")
file(WRITE "${src}" "${text}")

verify(1)
foreach(needle "out-of-bounds global access" "kernel sb_thread_per_output_s0" "${KERNEL}")
  string(FIND "${verify_out}" "${needle}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "the failure does not mention '${needle}':\n${verify_out}")
  endif()
endforeach()
message(STATUS "planted guard bug caught: ${KERNEL}")
