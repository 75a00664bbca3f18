# Spec paths that are not specs (issue 19, defect 6): each gen exits 2 at once with a message
# naming the file, never hangs or reads without end, and never shows content of a file that is
# not a spec:
#   /dev/zero; a link zero.yaml -> /dev/zero; a FIFO fifo.yaml with no writer; a link
#   passwd.yaml -> /etc/passwd; a copy of /etc/passwd named passwd.txt; a 2 MiB big.yaml.
# cmake -DSPECBENCH=<exe> -DWORK_DIR=<scratch> -P hostile_spec_files.cmake
cmake_minimum_required(VERSION 3.24)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(READ /etc/passwd passwd)
string(REGEX MATCH "^[^\n]*" passwd_line1 "${passwd}")

function(refused path pattern)
  execute_process(COMMAND ${SPECBENCH} --root ${WORK_DIR} gen ${path} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
  if(NOT rc STREQUAL "2")
    message(FATAL_ERROR "gen ${path}: exit ${rc}, expected 2\n${out}\n${err}")
  endif()
  if(NOT err MATCHES "${pattern}")
    message(FATAL_ERROR "gen ${path}: expected a message matching '${pattern}', got:\n${err}")
  endif()
  string(FIND "${out}${err}" "${passwd_line1}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "gen ${path} showed a line of /etc/passwd:\n${err}")
  endif()
  if(EXISTS ${WORK_DIR}/generated)
    message(FATAL_ERROR "gen ${path} wrote generated/")
  endif()
endfunction()

refused(/dev/zero "/dev/zero: error: a spec file's name must end in .yaml")
file(CREATE_LINK /dev/zero ${WORK_DIR}/zero.yaml SYMBOLIC)
refused(${WORK_DIR}/zero.yaml "zero.yaml: error: the spec file is a symbolic link to a file whose")
execute_process(COMMAND mkfifo ${WORK_DIR}/fifo.yaml RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mkfifo failed")
endif()
refused(${WORK_DIR}/fifo.yaml "fifo.yaml: error: cannot read spec file: it is a FIFO")
file(CREATE_LINK /etc/passwd ${WORK_DIR}/passwd.yaml SYMBOLIC)
refused(${WORK_DIR}/passwd.yaml "passwd.yaml: error: the spec file is a symbolic link")
file(WRITE ${WORK_DIR}/passwd.txt "${passwd}")
refused(${WORK_DIR}/passwd.txt "passwd.txt: error: a spec file's name must end in .yaml")
string(REPEAT "# padding line of a spec that is far too large\n" 45000 big)
file(WRITE ${WORK_DIR}/big.yaml "${big}")
refused(${WORK_DIR}/big.yaml "big.yaml: error: spec file is larger than 1 MiB")
file(REMOVE_RECURSE ${WORK_DIR})
