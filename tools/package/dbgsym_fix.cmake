# CPACK_POST_BUILD_SCRIPTS of the .deb (CMakeLists.txt beside this file).
# Two things CPack 3.25 leaves out of the -dbgsym .ddeb, which lintian reports
# as errors, are put right by unpacking it and building it again (the debug
# files themselves are unchanged):
# - its md5sums names the staging folder's absolute paths
#   (/.../_CPack_Packages/.../usr/lib/debug/...) instead of the paths in the
#   package (usr/lib/debug/...): md5sums-lists-nonexistent-file, and debsums
#   could not check it;
# - it has no copyright or changelog: as dh_strip does for Debian's own
#   dbgsym packages, usr/share/doc/NAME-dbgsym becomes a link to the doc
#   folder of NAME, the package it depends on at the same version.
find_program(DPKG_DEB dpkg-deb)
if(NOT DPKG_DEB)
  message(WARNING "dbgsym_fix: no dpkg-deb (apt-get install dpkg): the .ddeb keeps CPack's md5sums")
  return()
endif()
foreach(package IN LISTS CPACK_PACKAGE_FILES)
  if(NOT package MATCHES "\\.ddeb$")
    continue()
  endif()
  set(tree "${package}.tree")
  file(REMOVE_RECURSE "${tree}")
  execute_process(COMMAND ${DPKG_DEB} -R "${package}" "${tree}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dbgsym_fix: dpkg-deb -R ${package} failed")
  endif()
  file(READ "${tree}/DEBIAN/md5sums" sums)
  string(REGEX REPLACE "  /[^\n]*-dbgsym/usr/" "  usr/" sums "${sums}")
  file(WRITE "${tree}/DEBIAN/md5sums" "${sums}")
  get_filename_component(name "${package}" NAME)
  string(REGEX REPLACE "-dbgsym_.*$" "" name "${name}")
  file(MAKE_DIRECTORY "${tree}/usr/share/doc")
  if(NOT EXISTS "${tree}/usr/share/doc/${name}-dbgsym" AND NOT IS_SYMLINK "${tree}/usr/share/doc/${name}-dbgsym")
    file(CREATE_LINK "${name}" "${tree}/usr/share/doc/${name}-dbgsym" SYMBOLIC)
  endif()
  execute_process(COMMAND ${DPKG_DEB} --root-owner-group -Zxz -b "${tree}" "${package}"
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dbgsym_fix: dpkg-deb -b ${package} failed")
  endif()
  file(REMOVE_RECURSE "${tree}")
endforeach()
