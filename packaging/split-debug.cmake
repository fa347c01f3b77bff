# SPDX-License-Identifier: GPL-3.0-or-later
# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): what dh_strip and dh_gencontrol do for a Debian package, on
# CPack's staging folder. Each ELF file is stripped (symbols, .comment, .note), its debug sections go compressed to
# /usr/lib/debug/.build-id/xx/yyyy.debug, and those files become exposure-dbgsym_<version>_<arch>.deb in the output
# folder: Depends on the exact exposure version, its /usr/share/doc entry a link to exposure's, like Debian's
# automatic -dbgsym packages. (CPack's own CPACK_DEBIAN_DEBUGINFO_PACKAGE writes a .ddeb whose md5sums list
# absolute staging paths and which has no copyright file, both lintian errors.)
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
set(root "${CPACK_TEMPORARY_DIRECTORY}")
set(name "${CPACK_PACKAGE_NAME}")
set(version "${CPACK_PACKAGE_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
set(dbgname "${name}-dbgsym")
set(dbgroot "${CPACK_TOPLEVEL_DIRECTORY}/${dbgname}")
foreach(tool objcopy strip readelf dpkg-deb dpkg)
  string(REPLACE "-" "_" var "split_${tool}")
  find_program(${var} ${tool})
  if(NOT ${var})
    message(FATAL_ERROR "split-debug.cmake: ${tool} is not installed (apt-get install binutils dpkg)")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "split-debug.cmake: '${cmd}' failed (${rc}): ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${dbgroot}")
file(GLOB_RECURSE files LIST_DIRECTORIES false "${root}/*")
list(SORT files)
set(buildids)
foreach(f IN LISTS files)
  if(IS_SYMLINK "${f}")
    continue()
  endif()
  file(READ "${f}" magic LIMIT 4 HEX)
  if(NOT magic STREQUAL "7f454c46")
    continue()
  endif()
  run(${split_readelf} -n "${f}")
  if(NOT out MATCHES "Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)")
    file(RELATIVE_PATH rel "${root}" "${f}")
    message(FATAL_ERROR "split-debug.cmake: /${rel} has no build id (link with --build-id)")
  endif()
  set(debugfile "${dbgroot}/usr/lib/debug/.build-id/${CMAKE_MATCH_1}/${CMAKE_MATCH_2}.debug")
  list(APPEND buildids "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
  get_filename_component(dir "${debugfile}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  run(${split_objcopy} --only-keep-debug --compress-debug-sections "${f}" "${debugfile}")
  file(CHMOD "${debugfile}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  run(${split_strip} --remove-section=.comment --remove-section=.note "${f}")
  run(${split_objcopy} "--add-gnu-debuglink=${debugfile}" "${f}")
endforeach()
if(NOT buildids)
  return()
endif()

# The -dbgsym package: md5sums, control, the doc link, built with dpkg-deb (root-owned files). gzip, not xz: the
# debug sections are zlib-compressed already, and xz would take 20 s to gain nothing.
file(GLOB_RECURSE debugfiles LIST_DIRECTORIES false RELATIVE "${dbgroot}" "${dbgroot}/usr/*")
set(md5sums "")
set(kib 0)
foreach(rel IN LISTS debugfiles)
  file(MD5 "${dbgroot}/${rel}" sum)
  string(APPEND md5sums "${sum}  ${rel}\n")
  file(SIZE "${dbgroot}/${rel}" bytes)
  math(EXPR kib "${kib} + (${bytes} + 1023) / 1024")
endforeach()
file(MAKE_DIRECTORY "${dbgroot}/usr/share/doc")
file(CREATE_LINK "${name}" "${dbgroot}/usr/share/doc/${dbgname}" SYMBOLIC)
run(${split_dpkg} --print-architecture)
string(STRIP "${out}" arch)
list(JOIN buildids " " buildids)
file(MAKE_DIRECTORY "${dbgroot}/DEBIAN")
file(WRITE "${dbgroot}/DEBIAN/md5sums" "${md5sums}")
file(WRITE "${dbgroot}/DEBIAN/control"
  "Package: ${dbgname}\n"
  "Source: ${name}\n"
  "Version: ${version}\n"
  "Auto-Built-Package: debug-symbols\n"
  "Architecture: ${arch}\n"
  "Maintainer: ${CPACK_DEBIAN_PACKAGE_MAINTAINER}\n"
  "Installed-Size: ${kib}\n"
  "Depends: ${name} (= ${version})\n"
  "Section: debug\n"
  "Priority: optional\n"
  "Description: debug symbols for ${name}\n"
  "Build-Ids: ${buildids}\n")
file(CHMOD "${dbgroot}/DEBIAN/md5sums" "${dbgroot}/DEBIAN/control"
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
file(MAKE_DIRECTORY "${CPACK_PACKAGE_DIRECTORY}")
set(deb "${CPACK_PACKAGE_DIRECTORY}/${dbgname}_${version}_${arch}.deb")
run(${split_dpkg_deb} --root-owner-group -Zgzip --build "${dbgroot}" "${deb}")
message(STATUS "split-debug.cmake: ${deb} generated")
