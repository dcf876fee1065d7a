# Install-time half of giong_add_library()'s pkg-config support (run from cmake_install.cmake).
# Writes giong-<name>.pc from giong.pc.in with the prefix actually being installed to, so
# that `cmake --install --prefix <p>`, DESTDIR staging and CPack (/usr) all get a correct,
# absolute prefix. The GIONG_PC_* variables are set by the install(CODE) that includes us.
set(GIONG_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(_d IN ITEMS LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${GIONG_PC_${_d}}")
    set(GIONG_PC_${_d}_FULL "${GIONG_PC_${_d}}")
  else()
    set(GIONG_PC_${_d}_FULL "\${prefix}/${GIONG_PC_${_d}}")
  endif()
endforeach()
if(IS_ABSOLUTE "${GIONG_PC_LIBDIR}")
  set(_giong_pc_dest "${GIONG_PC_LIBDIR}/pkgconfig")
else()
  set(_giong_pc_dest "${CMAKE_INSTALL_PREFIX}/${GIONG_PC_LIBDIR}/pkgconfig")
endif()
configure_file("${GIONG_PC_TEMPLATE}" "${GIONG_PC_WORKDIR}/giong-${GIONG_PC_NAME}.pc" @ONLY)
# file(INSTALL) honours DESTDIR, prints "-- Installing:" and records the install manifest.
file(INSTALL DESTINATION "${_giong_pc_dest}" TYPE FILE
  FILES "${GIONG_PC_WORKDIR}/giong-${GIONG_PC_NAME}.pc")
