# install.tools: install the build tree's "tools" component (the giong-tools package) into a
# fresh prefix and check that it holds exactly the programs users run and the examples
# (EXPECTED: giong-serve, giong-load, giong-http, ... those this build has), and nothing
# else: a test harness (soak, churn, ring_info) that found its way in fails the test.
#   cmake -DBUILD_DIR=... -DCONFIG=... -DPREFIX=... -DBINDIR=bin "-DEXPECTED=a;b" -P check-tools.cmake
file(REMOVE_RECURSE "${PREFIX}")
execute_process(
  COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --config "${CONFIG}" --component tools
    --prefix "${PREFIX}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "install of component tools failed (${_rc}):\n${_out}")
endif()
file(GLOB_RECURSE _files LIST_DIRECTORIES false RELATIVE "${PREFIX}" "${PREFIX}/*")
set(_want "")
foreach(_p IN LISTS EXPECTED)
  list(APPEND _want "${BINDIR}/${_p}")
endforeach()
list(SORT _files)
list(SORT _want)
if(NOT _files STREQUAL _want)
  message(FATAL_ERROR "component tools installs\n  ${_files}\nexpected exactly\n  ${_want}")
endif()
list(LENGTH _files _n)
message(STATUS "component tools: ${_n} programs, as expected: ${_files}")
