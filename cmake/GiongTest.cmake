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
