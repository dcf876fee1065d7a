# giong_add_test(<lib> <unit> SOURCES ... [LIBS ...] [TIMEOUT n] [SERIAL] [INTERNAL])
#
# Builds tests/<lib>/test_<unit> and registers CTest test "<lib>.<unit>" with LABELS <lib>,
# SKIP_RETURN_CODE 77 (exit(77) when the kernel lacks io_uring or a feature) and TIMEOUT
# (default 60 s). Links cmocka, liburing (tests may prepare SQEs themselves) and giong::<lib>,
# and compiles with _GNU_SOURCE (pipe2, sigset_t, ...); INTERNAL links the white-box twin
# giong-<lib>-internal instead (same objects as a static library, src/ on the include path,
# the library's private definitions), for tests that call giong__* internals or #include a
# .c file. SERIAL: never run in parallel with another test. tests/support is on the include
# path.
include_guard(GLOBAL)

function(giong_add_test lib unit)
  cmake_parse_arguments(PARSE_ARGV 2 T "SERIAL;INTERNAL" "TIMEOUT" "SOURCES;LIBS")
  if(T_UNPARSED_ARGUMENTS OR NOT T_SOURCES)
    message(FATAL_ERROR "giong_add_test(${lib} ${unit}): SOURCES required; unknown: ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  string(REPLACE "_" "-" dash "${lib}")
  string(REPLACE "." "_" exe "test_${unit}")
  set(tgt test-${dash}-${unit})
  if(T_INTERNAL)
    set(under giong-${dash}-internal)
  else()
    set(under giong::${lib})
  endif()
  add_executable(${tgt} ${T_SOURCES})
  set_target_properties(${tgt} PROPERTIES
    OUTPUT_NAME ${exe}
    RUNTIME_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  target_include_directories(${tgt} PRIVATE "${PROJECT_SOURCE_DIR}/tests/support")
  target_compile_definitions(${tgt} PRIVATE _GNU_SOURCE)
  target_link_libraries(${tgt} PRIVATE ${under} PkgConfig::CMOCKA PkgConfig::URING ${T_LIBS})
  add_test(NAME ${lib}.${unit} COMMAND ${tgt})
  set_tests_properties(${lib}.${unit} PROPERTIES
    LABELS ${lib}
    SKIP_RETURN_CODE 77
    TIMEOUT ${T_TIMEOUT}
    RUN_SERIAL ${T_SERIAL})
endfunction()

# giong_faults_exact(<test>...)
#
# Label the tests faults_exact: each asserts that calls which allocate (or a TLS exchange)
# succeed, so under a GIONG_FAULTS plan that fails allocations and TLS steps it may fail; it
# must then fail cleanly (scripts/check faults, docs/testing.md). Call it in the directory that
# added the tests. The label means nothing in other builds.
function(giong_faults_exact)
  set_property(TEST ${ARGN} APPEND PROPERTY LABELS faults_exact)
endfunction()

# giong_add_tests(<lib> <entry>... [LIBS ...])
#
# The list of a library's tests, one giong_add_test() each. An entry is
# "<unit>[=<timeout>][:INTERNAL]": tests/<lib>/test_<unit>.c becomes CTest "<lib>.<unit>"
# (TIMEOUT in seconds, default 60; INTERNAL as in giong_add_test). Each links LIBS and the
# unit's own extra libraries, set(GIONG_<LIB>_LIBS_<unit> ...) before the call. A listed
# unit whose source file does not exist is a configure error, not a silent skip.
function(giong_add_tests lib)
  cmake_parse_arguments(PARSE_ARGV 1 T "" "" "LIBS")
  string(TOUPPER "${lib}" upper)
  foreach(entry IN LISTS T_UNPARSED_ARGUMENTS)
    if(NOT entry MATCHES "^([a-z0-9_]+)(=([0-9]+))?(:INTERNAL)?$")
      message(FATAL_ERROR "giong_add_tests(${lib}): bad entry '${entry}' (want unit[=timeout][:INTERNAL])")
    endif()
    set(unit "${CMAKE_MATCH_1}")
    set(timeout "${CMAKE_MATCH_3}")
    set(internal "")
    if(CMAKE_MATCH_4)
      set(internal INTERNAL)
    endif()
    if(NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/test_${unit}.c")
      message(FATAL_ERROR "giong_add_tests(${lib}): test '${unit}' is listed but "
                          "${CMAKE_CURRENT_SOURCE_DIR}/test_${unit}.c does not exist")
    endif()
    set(timeout_arg "")
    if(timeout)
      set(timeout_arg TIMEOUT ${timeout})
    endif()
    giong_add_test(${lib} ${unit} SOURCES test_${unit}.c ${timeout_arg} ${internal}
                   LIBS ${T_LIBS} ${GIONG_${upper}_LIBS_${unit}})
  endforeach()
endfunction()
