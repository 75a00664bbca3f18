# Which tree specbench works on: --root when given, else the current directory when it holds
# specs/, else exit 2 with a message saying how to pass one. The root in use is printed; --root
# and spec paths are both taken relative to the current directory; compare needs no tree.
# cmake -DSPECBENCH=<exe> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -P root.cmake
cmake_minimum_required(VERSION 3.24)

# run(<dir> <exit code> args...): runs specbench in <dir>; sets out and err.
function(run dir rc_expected)
  execute_process(COMMAND "${SPECBENCH}" ${ARGN} WORKING_DIRECTORY "${dir}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc STREQUAL "${rc_expected}")
    message(FATAL_ERROR
            "in ${dir}: specbench ${ARGN}: exit ${rc}, expected ${rc_expected}\n${o}\n${e}")
  endif()
  set(out "${o}" PARENT_SCOPE)
  set(err "${e}" PARENT_SCOPE)
endfunction()

function(must_match text pattern what)
  if(NOT "${text}" MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: does not match '${pattern}'\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/empty" "${WORK_DIR}/clone/specs" "${WORK_DIR}/clone/generated")
# A second checkout with one kernel.
file(COPY "${SOURCE_DIR}/specs/saxpy.yaml" DESTINATION "${WORK_DIR}/clone/specs")
file(COPY "${SOURCE_DIR}/generated/saxpy" DESTINATION "${WORK_DIR}/clone/generated")

# 1. No specs/ here and no --root: a user error naming the fix, for every command on the tree.
foreach(cmd list "gen;--check" "verify;saxpy" "bench;saxpy")
  run("${WORK_DIR}/empty" 2 ${cmd})
  must_match("${err}" "no specs/ in the current directory \\([^)]*empty\\)" "${cmd} without a tree")
  must_match("${err}" "--root DIR" "${cmd} without a tree")
endforeach()

# 2. In the second checkout: its own one spec, never the tree specbench was built from.
run("${WORK_DIR}/clone" 0 list)
must_match("${err}" "specbench: root ${WORK_DIR}/clone\n" "list in the clone")
must_match("${out}" "saxpy" "list in the clone")
if("${out}" MATCHES "softmax")
  message(FATAL_ERROR "list in the clone shows the source tree's specs:\n${out}")
endif()
run("${WORK_DIR}/clone" 0 gen --check)
must_match("${err}" "specbench: root ${WORK_DIR}/clone\n" "gen --check in the clone")

# 3. --root and spec paths, both relative to the current directory.
run("${WORK_DIR}" 0 --root clone gen --check clone/specs/saxpy.yaml)
must_match("${err}" "specbench: root ${WORK_DIR}/clone\n" "relative --root")
run("${WORK_DIR}/empty" 0 list --root ../clone)
must_match("${err}" "specbench: root ${WORK_DIR}/clone\n" "--root ../clone")
run("${WORK_DIR}" 2 --root no_such_dir list)

# 4. From the checkout itself (the README's `build/bin/specbench ...`).
run("${SOURCE_DIR}" 0 list)
must_match("${err}" "specbench: root ${SOURCE_DIR}\n" "list in the checkout")
must_match("${out}" "softmax" "list in the checkout")

# 5. compare and report read results files only: no tree needed.
set(B "${SOURCE_DIR}/tests/history/data/base.json")
run("${WORK_DIR}/empty" 0 compare "${B}" "${B}")
if("${err}" MATCHES "specbench: root")
  message(FATAL_ERROR "compare names a root it does not use:\n${err}")
endif()
message(STATUS "--root resolution checked")
