# giong_program(NAME LIB SOURCES... [TLS] [INSTALL] [LIBS extra...])
#
# One program of the tree: programs/ (what users run), examples/ (the library examples) or
# tests/harness/ (what only the tests run). Built into build/bin/NAME when giong::LIB is,
# with programs/ on its include path for the headers they share (args.h, hosts.h, ...).
#   TLS      link libgiong-tls and every backend built, with GIONG_HAVE_TLS=1 and
#            GIONG_HAVE_TLS_<BACKEND>=1 (tls_backends.h reads them); nothing when tls is off
#   INSTALL  install as giong-NAME (component tools: the giong-tools package), so that "echo"
#            and "cat" never shadow the system's. Test harnesses never pass it.
function(giong_program name lib)
  cmake_parse_arguments(P "TLS;INSTALL" "" "SOURCES;LIBS" ${ARGN})
  if(NOT TARGET giong::${lib} OR NOT P_SOURCES)
    return()
  endif()
  add_executable(${name} ${P_SOURCES})
  target_link_libraries(${name} PRIVATE giong::${lib} ${P_LIBS})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/programs")
  if(P_TLS AND TARGET giong::tls)
    target_link_libraries(${name} PRIVATE giong::tls)
    target_compile_definitions(${name} PRIVATE GIONG_HAVE_TLS=1)
    foreach(_b IN ITEMS wolfssl openssl)
      if(TARGET giong::tls_${_b})
        string(TOUPPER "${_b}" _B)
        target_link_libraries(${name} PRIVATE giong::tls_${_b})
        target_compile_definitions(${name} PRIVATE GIONG_HAVE_TLS_${_B}=1)
      endif()
    endforeach()
  endif()
  if(P_INSTALL)
    install(PROGRAMS $<TARGET_FILE:${name}> DESTINATION ${CMAKE_INSTALL_BINDIR}
      RENAME giong-${name} COMPONENT tools)
    # GiongPackage.cmake reads what it links, once configuring is over, for the giong-tools
    # package's Depends.
    set_property(GLOBAL APPEND PROPERTY GIONG_TOOLS_PROGRAMS ${name})
  endif()
endfunction()
