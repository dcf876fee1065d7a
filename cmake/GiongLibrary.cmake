# giong_add_library(): the one way a giong library is declared.
#
#   giong_add_library(<name>
#     SOURCES src/a.c src/b.c ...          # relative to the calling CMakeLists.txt
#     [DEPS <giong libs>]                  # PUBLIC giong::<dep>; .pc "Requires: giong-<dep> = ver"
#     [PRIVATE_DEPS <imported targets>]    # PRIVATE (Threads::Threads, PkgConfig::URING, ...)
#     [PC_REQUIRES_PRIVATE "liburing >= 2.3"]
#     [PC_LIBS_PRIVATE "-lhttp_parser"]
#     [DEFINES <private compile definitions>]
#     [GENERATED_HEADER_DIRS <dirs>]      # extra include/ roots in the build tree
#     [DEB_DEV_DEPENDS "liburing-dev (>= 2.3)"]
#     [FAULTS_EXPORTS <names>]             # GIONG_FAULTS=ON only: internals exported too
#     DESCRIPTION "one line")
#
# Makes, for name "net" (name "tls_wolfssl" gives giong-tls-wolfssl, giong::tls_wolfssl):
#   giong-net-obj       OBJECT library: the sources compiled once, hidden visibility
#   giong-net           libgiong-net.so.0 (or .a), alias giong::net, EXPORT_NAME net
#   giong-net-internal  static library from the same objects, with src/ on its include path and
#                       the private definitions: for white-box tests and benchmarks only
#                       (EXCLUDE_FROM_ALL, never installed; hidden visibility does not matter in a
#                       static link, so giong__* internals are reachable from it)
# Headers: every *.h under <dir>/include (FILE_SET HEADERS, BASE_DIRS include).
# Install: components <name> (runtime .so) and <name>_dev (headers, namelink, .a, targets
# file giong-<name>-targets.cmake, giong-<dash>.pc). A file giong-<dash>.sym next to the
# calling CMakeLists.txt, if present, is used as the linker version script.
# GIONG_FAULTS=ON: every C source is compiled with -include private/giong_faults.h (the
# allocation wrappers, see there), and a library with FAULTS_EXPORTS links a version script
# generated from its own with one more node, GIONG_FAULTS, exporting those internals
# (tests/build/check-exports.sh knows it).
include_guard(GLOBAL)
include(GNUInstallDirs)

set(GIONG_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")
# private/giong_private.h: what every library's sources share (lists, container_of); never installed.
get_filename_component(GIONG_PRIVATE_DIR "${CMAKE_CURRENT_LIST_DIR}/../private" ABSOLUTE)
set(GIONG_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/giong")

function(giong_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 A ""
    "DESCRIPTION"
    "SOURCES;DEPS;PRIVATE_DEPS;PC_REQUIRES_PRIVATE;PC_LIBS_PRIVATE;DEFINES;GENERATED_HEADER_DIRS;DEB_DEV_DEPENDS;FAULTS_EXPORTS")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "giong_add_library(${name}): unknown arguments ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT A_SOURCES OR NOT A_DESCRIPTION)
    message(FATAL_ERROR "giong_add_library(${name}): SOURCES and DESCRIPTION are required")
  endif()
  string(REPLACE "_" "-" dash "${name}")
  set(tgt giong-${dash})
  set(src_dir "${CMAKE_CURRENT_SOURCE_DIR}")

  set(closure ${name})          # this library and everything below it
  set(dep_targets "")
  set(dep_internal "")
  set(pc_requires "")
  foreach(d IN LISTS A_DEPS)
    if(NOT TARGET giong::${d})
      string(TOUPPER "${d}" D)
      message(FATAL_ERROR "giong-${dash} needs giong::${d}, which is not built "
        "(turn on GIONG_BUILD_${D} and add libgiong-${d} before libgiong-${dash})")
    endif()
    string(REPLACE "_" "-" ddash "${d}")
    list(APPEND dep_targets giong::${d})
    list(APPEND dep_internal giong-${ddash}-internal)
    list(APPEND pc_requires "giong-${ddash} = ${PROJECT_VERSION}")
    get_property(dclosure GLOBAL PROPERTY GIONG_LIB_${d}_CLOSURE)
    list(APPEND closure ${dclosure})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  list(JOIN pc_requires ", " pc_requires)

  set(header_dirs "${src_dir}/include" ${A_GENERATED_HEADER_DIRS})
  set(headers "")
  foreach(dir IN LISTS header_dirs)
    file(GLOB_RECURSE h CONFIGURE_DEPENDS "${dir}/*.h")
    list(APPEND headers ${h})
  endforeach()

  # --- the objects, compiled once -----------------------------------------------------------
  add_library(${tgt}-obj OBJECT ${A_SOURCES})
  set_target_properties(${tgt}-obj PROPERTIES
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ${BUILD_SHARED_LIBS})
  target_include_directories(${tgt}-obj PRIVATE ${header_dirs} "${src_dir}/src" "${GIONG_PRIVATE_DIR}")
  target_compile_definitions(${tgt}-obj PRIVATE _GNU_SOURCE ${A_DEFINES})
  target_link_libraries(${tgt}-obj PRIVATE ${dep_targets} ${A_PRIVATE_DEPS})
  if(GIONG_FAULTS)
    # The libraries' own allocations through the fault plan (private/giong_faults.h).
    target_compile_options(${tgt}-obj PRIVATE
      "$<$<COMPILE_LANGUAGE:C>:SHELL:-include ${GIONG_PRIVATE_DIR}/giong_faults.h>")
    target_compile_definitions(${tgt}-obj PRIVATE GIONG__FAULTS_ALLOC)
  endif()

  # --- the library (compiles nothing itself: visibility and _GNU_SOURCE are on the objects) --
  add_library(${tgt} $<TARGET_OBJECTS:${tgt}-obj>)
  add_library(giong::${name} ALIAS ${tgt})
  target_sources(${tgt} PUBLIC FILE_SET HEADERS BASE_DIRS ${header_dirs} FILES ${headers})
  set_target_properties(${tgt} PROPERTIES
    EXPORT_NAME ${name}
    OUTPUT_NAME ${tgt}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR})
  target_link_libraries(${tgt} PUBLIC ${dep_targets} PRIVATE ${A_PRIVATE_DEPS})
  if(BUILD_SHARED_LIBS)
    # Clang does not link the sanitizer runtime into shared libraries: their __asan_* /
    # __tsan_* references stay undefined until the executable provides them.
    if(NOT (GIONG_SANITIZE AND CMAKE_C_COMPILER_ID MATCHES "Clang"))
      target_link_options(${tgt} PRIVATE "LINKER:--no-undefined")
    endif()
    set(symfile "${src_dir}/giong-${dash}.sym")
    if(EXISTS "${symfile}" AND GIONG_FAULTS AND A_FAULTS_EXPORTS)
      # The library's own script and one more node for the fault plan's internals.
      file(READ "${symfile}" sym)
      list(JOIN A_FAULTS_EXPORTS ";\n\t" names)
      string(APPEND sym "\n/* GIONG_FAULTS=ON only (cmake/GiongLibrary.cmake) */\n"
        "GIONG_FAULTS {\nglobal:\n\t${names};\n};\n")
      set(gen "${CMAKE_CURRENT_BINARY_DIR}/giong-${dash}-faults.sym")
      file(CONFIGURE OUTPUT "${gen}" CONTENT "${sym}" @ONLY)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${symfile}")
      set(symfile "${gen}")
      set_property(GLOBAL PROPERTY GIONG_LIB_${name}_SYMFILE "${gen}")
    endif()
    if(EXISTS "${symfile}")
      target_link_options(${tgt} PRIVATE "LINKER:--version-script=${symfile}")
      set_property(TARGET ${tgt} APPEND PROPERTY LINK_DEPENDS "${symfile}")
    endif()
  endif()

  # --- white-box twin ---------------------------------------------------------------------------
  add_library(${tgt}-internal STATIC EXCLUDE_FROM_ALL $<TARGET_OBJECTS:${tgt}-obj>)
  set_target_properties(${tgt}-internal PROPERTIES
    ARCHIVE_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")  # keep lib/ for what ships
  target_include_directories(${tgt}-internal PUBLIC ${header_dirs} "${src_dir}/src" "${GIONG_PRIVATE_DIR}")
  target_compile_definitions(${tgt}-internal PUBLIC _GNU_SOURCE ${A_DEFINES})
  target_link_libraries(${tgt}-internal PUBLIC ${dep_internal} ${A_PRIVATE_DEPS})

  # --- what the rest of the build needs to know ---------------------------------------------
  set_property(GLOBAL APPEND PROPERTY GIONG_LIBRARIES ${name})
  set_property(GLOBAL PROPERTY GIONG_LIB_${name}_DEPS "${A_DEPS}")
  set_property(GLOBAL PROPERTY GIONG_LIB_${name}_CLOSURE "${closure}")
  set_property(GLOBAL PROPERTY GIONG_LIB_${name}_DESCRIPTION "${A_DESCRIPTION}")
  set_property(GLOBAL PROPERTY GIONG_LIB_${name}_DEB_DEV_DEPENDS "${A_DEB_DEV_DEPENDS}")
  set_property(GLOBAL PROPERTY GIONG_LIB_${name}_HEADER_DIRS "${header_dirs}")
  set_property(GLOBAL PROPERTY GIONG_LIB_${name}_SOURCE_DIR "${src_dir}")
  if(GIONG_FAULTS)
    set_property(GLOBAL PROPERTY GIONG_LIB_${name}_FAULTS_EXPORTS "${A_FAULTS_EXPORTS}")
  endif()
  # How giongConfig.cmake finds the private dependencies. Only a static library's exported
  # target references them ($<LINK_ONLY:...>); a shared one hides them completely.
  set(config_find "")
  if(NOT BUILD_SHARED_LIBS)
    foreach(p IN LISTS A_PRIVATE_DEPS)
      if(p STREQUAL "Threads::Threads")
        list(APPEND config_find "Threads")
      elseif(p MATCHES "^PkgConfig::(.+)$")
        set(prefix "${CMAKE_MATCH_1}")
        if(NOT ${prefix}_MODULE_NAME)
          message(FATAL_ERROR "giong_add_library(${name}): ${p} must come from "
            "pkg_check_modules(${prefix} IMPORTED_TARGET <one module>)")
        endif()
        list(APPEND config_find "pkg:${prefix}:${${prefix}_MODULE_NAME}")
      elseif(p MATCHES "^([^:]+)::")
        list(APPEND config_find "${CMAKE_MATCH_1}") # package name = target namespace
      endif()
    endforeach()
  endif()
  set_property(GLOBAL PROPERTY GIONG_LIB_${name}_CONFIG_FIND "${config_find}")

  if(NOT GIONG_INSTALL)
    return()
  endif()

  # --- install ------------------------------------------------------------------------------
  install(TARGETS ${tgt} EXPORT giong-${name}-targets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${name} NAMELINK_COMPONENT ${name}_dev
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${name}_dev
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${name}
    FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT ${name}_dev)
  install(EXPORT giong-${name}-targets
    NAMESPACE giong::
    DESTINATION ${GIONG_INSTALL_CMAKEDIR}
    COMPONENT ${name}_dev)

  # The .pc is written at install time so that its prefix is the one actually installed to
  # (cmake --install --prefix, CPack's /usr): one template, cmake/giong.pc.in.
  list(JOIN A_PC_REQUIRES_PRIVATE ", " pc_requires_private)
  list(JOIN A_PC_LIBS_PRIVATE " " pc_libs_private)
  install(CODE "set(GIONG_PC_NAME [==[${dash}]==])
set(GIONG_PC_DESCRIPTION [==[${A_DESCRIPTION}]==])
set(GIONG_PC_VERSION [==[${PROJECT_VERSION}]==])
set(GIONG_PC_REQUIRES [==[${pc_requires}]==])
set(GIONG_PC_REQUIRES_PRIVATE [==[${pc_requires_private}]==])
set(GIONG_PC_LIBS_PRIVATE [==[${pc_libs_private}]==])
set(GIONG_PC_LIBDIR [==[${CMAKE_INSTALL_LIBDIR}]==])
set(GIONG_PC_INCLUDEDIR [==[${CMAKE_INSTALL_INCLUDEDIR}]==])
set(GIONG_PC_TEMPLATE [==[${GIONG_CMAKE_DIR}/giong.pc.in]==])
set(GIONG_PC_WORKDIR [==[${CMAKE_CURRENT_BINARY_DIR}/pkgconfig]==])
include([==[${GIONG_CMAKE_DIR}/GiongInstallPc.cmake]==])"
    COMPONENT ${name}_dev)
endfunction()
