# A generated file edited by hand is what gets built and verified, with no CMake step: copy one
# kernel's spec and generated files into a scratch root, verify (pass), plant a bug in the CPU
# file (its first variant writes nothing), verify again (must fail, naming the kernel).
#
# cmake -DSPECBENCH=<exe> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> [-DKERNEL=<name>] -P hand_edit.cmake
cmake_minimum_required(VERSION 3.24)
foreach(v SPECBENCH SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "hand_edit.cmake: -D${v}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/specs" "${WORK_DIR}/generated")

# The preferred kernel, else the first one with a generated CPU file. When the repository has no
# generated files yet, generate them in the scratch root instead.
file(GLOB candidates "${SOURCE_DIR}/generated/*/cpu/*.cpp")
if(candidates)
  if(NOT DEFINED KERNEL OR NOT EXISTS "${SOURCE_DIR}/generated/${KERNEL}/cpu/${KERNEL}.cpp")
    list(SORT candidates)
    list(GET candidates 0 first)
    get_filename_component(KERNEL "${first}" NAME_WE)
  endif()
  file(COPY "${SOURCE_DIR}/specs/${KERNEL}.yaml" DESTINATION "${WORK_DIR}/specs")
  file(COPY "${SOURCE_DIR}/generated/${KERNEL}" DESTINATION "${WORK_DIR}/generated")
else()
  if(NOT DEFINED KERNEL OR NOT EXISTS "${SOURCE_DIR}/specs/${KERNEL}.yaml")
    file(GLOB specs "${SOURCE_DIR}/specs/*.yaml")
    list(SORT specs)
    list(GET specs 0 first)
    get_filename_component(KERNEL "${first}" NAME_WE)
  endif()
  file(COPY "${SOURCE_DIR}/specs/${KERNEL}.yaml" DESTINATION "${WORK_DIR}/specs")
  execute_process(COMMAND "${SPECBENCH}" gen --root "${WORK_DIR}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "specbench gen failed in ${WORK_DIR}")
  endif()
endif()
message(STATUS "kernel: ${KERNEL}")
set(cache "${WORK_DIR}/cache")
set(src "${WORK_DIR}/generated/${KERNEL}/cpu/${KERNEL}.cpp")

function(verify expect_rc)
  execute_process(
    COMMAND "${SPECBENCH}" verify ${KERNEL} --backend cpu --seeds 1 --root "${WORK_DIR}"
            --cache-dir "${cache}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "verify exited ${rc}, expected ${expect_rc}\n${out}\n${err}")
  endif()
  set(verify_out "${out}\n${err}" PARENT_SCOPE)
endfunction()

# 1. The untouched copy passes.
verify(0)

# 2. Plant a bug: wrap the module table so that the first variant does nothing.
file(READ "${src}" text)
string(FIND "${text}" "specbench_module" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${src} defines no specbench_module")
endif()
string(REPLACE "specbench_module" "specbench_planted_original_module" text "${text}")
string(APPEND text [=[

/* Planted by tests/e2e/hand_edit.cmake: the first variant writes nothing. */
static int specbench_planted_noop(const sb_args* args) {
  (void)args;
  return 0;
}
extern "C" const sb_module* specbench_module(void) {
  static sb_module table;
  static sb_variant variants[64];
  table = *specbench_planted_original_module();
  for (int i = 0; i < table.num_variants && i < 64; ++i) variants[i] = table.variants[i];
  variants[0].fn = specbench_planted_noop;
  table.variants = variants;
  return &table;
}
]=])
file(WRITE "${src}" "${text}")

# 3. The edit is rebuilt (a second module appears in the cache) and the bug is caught.
verify(1)
if(NOT verify_out MATCHES "FAIL" OR NOT verify_out MATCHES "${KERNEL}")
  message(FATAL_ERROR "verify failed without naming the failure and ${KERNEL}:\n${verify_out}")
endif()
file(GLOB modules "${cache}/${KERNEL}-cpu-*.so")
list(LENGTH modules n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected 2 cached modules (original and edited), found ${n}: ${modules}")
endif()
message(STATUS "hand edit rebuilt and caught")
