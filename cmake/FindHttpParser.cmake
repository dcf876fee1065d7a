# FindHttpParser - nodejs http-parser (Debian: libhttp-parser-dev), which ships no pkg-config
# file and no CMake package.
#
#   find_package(HttpParser [2.9] [REQUIRED])
#
# Defines the imported target HttpParser::HttpParser and HttpParser_FOUND,
# HttpParser_VERSION (from HTTP_PARSER_VERSION_* in http_parser.h), HttpParser_INCLUDE_DIR,
# HttpParser_LIBRARY. Installed beside giongConfig.cmake, so that a consumer of a static
# libgiong-http finds it the same way.
include_guard(GLOBAL)
find_path(HttpParser_INCLUDE_DIR http_parser.h)
find_library(HttpParser_LIBRARY NAMES http_parser)

if(HttpParser_INCLUDE_DIR AND EXISTS "${HttpParser_INCLUDE_DIR}/http_parser.h")
  file(STRINGS "${HttpParser_INCLUDE_DIR}/http_parser.h" _hp_ver
    REGEX "^#define HTTP_PARSER_VERSION_(MAJOR|MINOR|PATCH) [0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*HTTP_PARSER_VERSION_${_part} ([0-9]+).*" "\\1" _hp_${_part} "${_hp_ver}")
  endforeach()
  set(HttpParser_VERSION "${_hp_MAJOR}.${_hp_MINOR}.${_hp_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(HttpParser
  REQUIRED_VARS HttpParser_LIBRARY HttpParser_INCLUDE_DIR
  VERSION_VAR HttpParser_VERSION
  REASON_FAILURE_MESSAGE "nodejs http-parser is missing: apt-get install libhttp-parser-dev")

if(HttpParser_FOUND AND NOT TARGET HttpParser::HttpParser)
  add_library(HttpParser::HttpParser UNKNOWN IMPORTED)
  set_target_properties(HttpParser::HttpParser PROPERTIES
    IMPORTED_LOCATION "${HttpParser_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${HttpParser_INCLUDE_DIR}")
endif()
mark_as_advanced(HttpParser_INCLUDE_DIR HttpParser_LIBRARY)
