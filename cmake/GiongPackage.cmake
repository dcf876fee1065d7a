# Package config (giongConfig.cmake, installed with core_dev) and CPack DEB, computed from
# the libraries actually built (GIONG_LIBRARIES, filled by giong_add_library()).
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

# --- giongConfig.cmake --------------------------------------------------------------------------
set(GIONG_CONFIG_TABLE "")
foreach(lib IN LISTS GIONG_LIBRARIES)
  get_property(deps GLOBAL PROPERTY GIONG_LIB_${lib}_DEPS)
  get_property(finds GLOBAL PROPERTY GIONG_LIB_${lib}_CONFIG_FIND)
  string(APPEND GIONG_CONFIG_TABLE
    "set(_giong_deps_${lib} \"${deps}\")\nset(_giong_find_${lib} \"${finds}\")\n")
endforeach()
configure_package_config_file(cmake/giongConfig.cmake.in
  "${PROJECT_BINARY_DIR}/giongConfig.cmake"
  INSTALL_DESTINATION ${GIONG_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/giongConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/giongConfig.cmake" "${PROJECT_BINARY_DIR}/giongConfigVersion.cmake"
  DESTINATION ${GIONG_INSTALL_CMAKEDIR}
  COMPONENT core_dev)
# Find modules for private dependencies without a CMake package or .pc (http-parser): a
# static giong's targets reference them, giongConfig.cmake finds them from here.
if("http" IN_LIST GIONG_LIBRARIES)
  install(FILES "${PROJECT_SOURCE_DIR}/cmake/FindHttpParser.cmake"
    DESTINATION ${GIONG_INSTALL_CMAKEDIR}
    COMPONENT http_dev)
endif()

# --- CPack: one runtime and one -dev package per library ---------------------------------------
set(CPACK_PACKAGE_NAME giong)
set(CPACK_PACKAGE_VENDOR "giong")
set(CPACK_PACKAGE_CONTACT "giong maintainers <giong@localhost>")
set(CPACK_PROJECT_CONFIG_FILE "${PROJECT_SOURCE_DIR}/cmake/GiongCPackOptions.cmake")
set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/packages")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)   # else *_DEPENDS is ignored (cmake#19858)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)          # needs dpkg-dev
# One directory only: a list breaks on cmake 3.25 (cmake#24349).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${PROJECT_BINARY_DIR}/lib")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)

set(CPACK_COMPONENTS_ALL "")
foreach(lib IN LISTS GIONG_LIBRARIES)
  string(TOUPPER "${lib}" U)
  string(REPLACE "_" "-" dash "${lib}")
  get_property(deps GLOBAL PROPERTY GIONG_LIB_${lib}_DEPS)
  get_property(desc GLOBAL PROPERTY GIONG_LIB_${lib}_DESCRIPTION)
  get_property(dev_extra GLOBAL PROPERTY GIONG_LIB_${lib}_DEB_DEV_DEPENDS)

  # <lib>_dev: headers, namelink or .a, .pc, CMake targets; needs the dev packages below it.
  set(dev_depends core_dev)
  foreach(d IN LISTS deps)
    list(APPEND dev_depends ${d}_dev)
  endforeach()
  if(BUILD_SHARED_LIBS)
    # <lib>: libgiong-<lib>.so.0; Debian libraries come from dpkg-shlibdeps. The name is the
    # SONAME's, with a hyphen before the version when the library's name ends in a digit
    # (Debian Policy 8.1): libgiong-core0, but libgiong-http2-0.
    list(APPEND CPACK_COMPONENTS_ALL ${lib})
    set(sep "")
    if(dash MATCHES "[0-9]$")
      set(sep "-")
    endif()
    set(CPACK_DEBIAN_${U}_PACKAGE_NAME "libgiong-${dash}${sep}${PROJECT_VERSION_MAJOR}")
    set(CPACK_DEBIAN_${U}_PACKAGE_SECTION libs)
    set(CPACK_COMPONENT_${U}_DESCRIPTION
      "giong ${lib} library (shared library)\n${desc}.\n${PROJECT_DESCRIPTION}.")
    set(CPACK_COMPONENT_${U}_DEPENDS "${deps}")
    list(PREPEND dev_depends ${lib})
  endif()
  list(REMOVE_ITEM dev_depends ${lib}_dev)
  list(REMOVE_DUPLICATES dev_depends)
  list(APPEND CPACK_COMPONENTS_ALL ${lib}_dev)
  set(CPACK_DEBIAN_${U}_DEV_PACKAGE_NAME "libgiong-${dash}-dev")
  set(CPACK_DEBIAN_${U}_DEV_PACKAGE_SECTION libdevel)
  set(CPACK_DEBIAN_${U}_DEV_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_${U}_DEV_PACKAGE_DEPENDS "${dev_extra}")
  set(CPACK_COMPONENT_${U}_DEV_DESCRIPTION
    "giong ${lib} library (development files)\n${desc}.\nHeaders, pkg-config file giong-${dash}.pc and CMake package giong (component ${lib}).")
  set(CPACK_COMPONENT_${U}_DEV_DEPENDS "${dev_depends}")
endforeach()

# giong-tools: what giong_program(... INSTALL) installs (cmake/GiongProgram.cmake), the
# programs users run (programs/: giong-serve, giong-load) and the library examples
# (examples/: giong-http, giong-echo, giong-udp_echo, giong-cat). The test harnesses
# (tests/harness/: soak, churn, ring_info) are never installed. The package keeps its name
# (giong-tools) so that an upgrade replaces the one that held the harnesses too.
if(GIONG_BUILD_TOOLS)
  list(APPEND CPACK_COMPONENTS_ALL tools)
  set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME giong-tools)
  set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
  set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "giong programs and library examples\ngiong-serve (static files over HTTP and HTTPS), giong-load (HTTP load\ngenerator), and the examples giong-http, giong-fetch, giong-echo, giong-udp_echo, giong-cat.\n${PROJECT_DESCRIPTION}.")
  if(BUILD_SHARED_LIBS)
    # The libraries the installed programs (giong_program(... INSTALL)) link and those below
    # them, whose functions the programs call too; not every library built, so that one no
    # program uses (libgiong-http2) stays out. Libraries outside giong come from
    # dpkg-shlibdeps: libnghttp2 with giong-load (its --h2 links it itself).
    get_property(_tools_programs GLOBAL PROPERTY GIONG_TOOLS_PROGRAMS)
    set(_tools_libs "")
    foreach(_p IN LISTS _tools_programs)
      get_target_property(_links ${_p} LINK_LIBRARIES)
      foreach(_l IN LISTS _links)
        if(_l MATCHES "^giong::(.+)$")
          get_property(_closure GLOBAL PROPERTY GIONG_LIB_${CMAKE_MATCH_1}_CLOSURE)
          list(APPEND _tools_libs ${_closure})
        endif()
      endforeach()
    endforeach()
    set(CPACK_COMPONENT_TOOLS_DEPENDS "")
    foreach(_l IN LISTS GIONG_LIBRARIES)
      if(_l IN_LIST _tools_libs)
        list(APPEND CPACK_COMPONENT_TOOLS_DEPENDS ${_l})
      endif()
    endforeach()
  endif()
endif()

include(CPack)
