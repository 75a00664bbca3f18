# The nightly run as a CTest dashboard script:
#
#   ctest -S harness/scripts/nightly.cmake [-DNIGHTLY_ARGS="saxpy -b cpu"] [-DMODEL=Nightly]
#         [-DSUBMIT_URL=https://cdash.example/submit.php?project=specbench] [-V]
#
# It configures build-nightly/ (its own build folder, so that the `nightly` test, enabled there with
# SPECBENCH_NIGHTLY=ON, never runs with the ordinary test suite in build/), builds specbench, and
# runs that one test: `specbench nightly` with NIGHTLY_ARGS (words split as a shell would; default:
# none, i.e. every spec
# and backend), which checks generated/, builds, verifies, benchmarks, stores the results under
# results/<host>/, compares them with the previous run and writes the report to
# build/nightly-report/. The test fails on a regression or a verification failure. With
# SUBMIT_URL the configure, build and test results go to that CDash; without it nothing leaves the
# machine. The script fails when any step does.
cmake_minimum_required(VERSION 3.24)

get_filename_component(CTEST_SOURCE_DIRECTORY "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(CTEST_BINARY_DIRECTORY "${CTEST_SOURCE_DIRECTORY}/build-nightly")
set(CTEST_CMAKE_GENERATOR "Ninja")
set(CTEST_CONFIGURATION_TYPE Release)
site_name(CTEST_SITE)
set(CTEST_BUILD_NAME "specbench-nightly")
if(NOT DEFINED MODEL)
  set(MODEL Experimental)
endif()
if(NOT DEFINED NIGHTLY_ARGS)
  set(NIGHTLY_ARGS "")
endif()
if(DEFINED SUBMIT_URL)
  set(CTEST_SUBMIT_URL "${SUBMIT_URL}")
endif()

ctest_start(${MODEL})
ctest_configure(
  OPTIONS "-DCMAKE_BUILD_TYPE=Release;-DSPECBENCH_NIGHTLY=ON;-DSPECBENCH_NIGHTLY_ARGS=${NIGHTLY_ARGS}"
  RETURN_VALUE configure_rc)
if(NOT configure_rc EQUAL 0)
  message(FATAL_ERROR "nightly: configure failed")
endif()
# Only the command: the nightly test needs nothing else.
ctest_build(TARGET specbench RETURN_VALUE build_rc NUMBER_ERRORS build_errors)
if(NOT build_rc EQUAL 0 OR build_errors GREATER 0)
  message(FATAL_ERROR "nightly: build failed")
endif()
ctest_test(INCLUDE_LABEL "^nightly$" RETURN_VALUE test_rc)
if(DEFINED CTEST_SUBMIT_URL)
  ctest_submit()
endif()
if(NOT test_rc EQUAL 0)
  message(FATAL_ERROR "nightly: specbench nightly failed (a regression, a verification failure or "
                      "a build failure); see build/nightly-report/compare.md")
endif()
