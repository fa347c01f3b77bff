# SPDX-License-Identifier: GPL-3.0-or-later
# Included from packaging/CMakeLists.txt: what an installed copy needs beyond the binaries (PNG icons, man pages,
# copyright and changelog) and the CPack DEB settings. `cpack` in the build folder then writes
# exposure_<version>_<arch>.deb and exposure-dbgsym_<version>_<arch>.deb (the split-off debug symbols).

# The installed programs: no RUNPATH (qt_standard_project_setup sets $ORIGIN/../lib, where nothing of ours lives),
# and Debian's hardening link flags (full RELRO, bind now).
foreach(target IN ITEMS exposure exposure-cli exposure-cli-render exposure-otf2-probe)
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "")
  target_link_options(${target} PRIVATE LINKER:-z,relro LINKER:-z,now)
endforeach()

# PNG icons at the usual hicolor sizes, rasterised at build time from the SVG by a small Qt tool.
add_executable(exposure-render-icon rendericon.cpp)
target_link_libraries(exposure-render-icon PRIVATE Qt6::Gui Qt6::Svg exposure_warnings)
set(EXPOSURE_ICON_SIZES 16 22 24 32 48 64 128 256 512)
set(icondir ${CMAKE_CURRENT_BINARY_DIR}/icons)
set(icons)
foreach(size IN LISTS EXPOSURE_ICON_SIZES)
  list(APPEND icons ${icondir}/${size}x${size}/apps/${EXPOSURE_APP_ID}.png)
endforeach()
add_custom_command(
  OUTPUT ${icons}
  COMMAND exposure-render-icon ${CMAKE_CURRENT_SOURCE_DIR}/icons/${EXPOSURE_APP_ID}.svg ${icondir} ${EXPOSURE_APP_ID}
          ${EXPOSURE_ICON_SIZES}
  DEPENDS exposure-render-icon icons/${EXPOSURE_APP_ID}.svg
  COMMENT "Rendering the PNG icons"
  VERBATIM)
add_custom_target(exposure_png_icons ALL DEPENDS ${icons})
install(DIRECTORY ${icondir}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor)

# Man pages generated from --help and --version by help2man (the GUI's --help needs no display under offscreen).
find_program(EXPOSURE_GZIP gzip REQUIRED)
find_program(EXPOSURE_HELP2MAN help2man)
mark_as_advanced(EXPOSURE_HELP2MAN EXPOSURE_GZIP)
if(EXPOSURE_HELP2MAN)
  set(mandir ${CMAKE_CURRENT_BINARY_DIR}/man)
  set(EXPOSURE_MAN_NAME_exposure "trace viewer for multi-GPU training: compute vs. exposed communication")
  set(EXPOSURE_MAN_NAME_exposure-cli "exposed-communication statistics, figures and run comparisons of training traces")
  set(manpages)
  # exposure-cli's page also carries each command's --help.
  add_custom_command(
    OUTPUT ${mandir}/exposure-cli-commands.h2m
    COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:exposure-cli> -DOUT=${mandir}/exposure-cli-commands.h2m
            -P ${CMAKE_CURRENT_SOURCE_DIR}/man-commands.cmake
    DEPENDS exposure-cli man-commands.cmake
    VERBATIM)
  set(EXPOSURE_MAN_INCLUDES_exposure --include=${CMAKE_CURRENT_SOURCE_DIR}/man/exposure.h2m)
  set(EXPOSURE_MAN_INCLUDES_exposure-cli --include=${mandir}/exposure-cli-commands.h2m
      --include=${CMAKE_CURRENT_SOURCE_DIR}/man/exposure-cli.h2m)
  set(EXPOSURE_MAN_DEPENDS_exposure man/exposure.h2m)
  set(EXPOSURE_MAN_DEPENDS_exposure-cli man/exposure-cli.h2m ${mandir}/exposure-cli-commands.h2m)
  foreach(prog IN ITEMS exposure exposure-cli)
    add_custom_command(
      OUTPUT ${mandir}/${prog}.1.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${mandir}
      # Run from PATH so that the usage line names the program, not its build path.
      COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen "PATH=$<TARGET_FILE_DIR:${prog}>:/usr/bin:/bin"
              ${EXPOSURE_HELP2MAN} --no-info --section=1 "--name=${EXPOSURE_MAN_NAME_${prog}}"
              ${EXPOSURE_MAN_INCLUDES_${prog}} --output=${mandir}/${prog}.1 ${prog}
      COMMAND ${EXPOSURE_GZIP} -9nf ${mandir}/${prog}.1
      DEPENDS ${prog} ${EXPOSURE_MAN_DEPENDS_${prog}}
      COMMENT "Generating the ${prog}(1) man page"
      VERBATIM)
    list(APPEND manpages ${mandir}/${prog}.1.gz)
  endforeach()
  add_custom_target(exposure_man_pages ALL DEPENDS ${manpages})
  install(FILES ${manpages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man pages will be installed (apt-get install help2man)")
endif()

# Debian documentation: DEP-5 copyright and the Debian changelog, whose first entry gives the package version.
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/debian/changelog changelog_top LIMIT_COUNT 1)
if(NOT changelog_top MATCHES "^exposure \\(${PROJECT_VERSION}-([0-9]+)\\) ")
  message(FATAL_ERROR "packaging/debian/changelog: its first entry '${changelog_top}' is not version "
                      "${PROJECT_VERSION}-N (the project version); add an entry for ${PROJECT_VERSION}")
endif()
set(EXPOSURE_DEBIAN_REVISION ${CMAKE_MATCH_1})
set(docdir ${CMAKE_INSTALL_DATADIR}/doc/exposure)
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/debian/changelog
          ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian
  COMMAND ${EXPOSURE_GZIP} -9nf ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian
  DEPENDS debian/changelog
  VERBATIM)
add_custom_target(exposure_debian_changelog ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz)
install(FILES debian/copyright ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz DESTINATION ${docdir})
install(FILES debian/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME exposure)

# The package. The maintainer is a cache variable so that whoever publishes the package puts their own address.
set(EXPOSURE_DEB_MAINTAINER "Exposure developers <dev@exposure.invalid>"
    CACHE STRING "Maintainer (name <email>) of the Debian package")
set(CPACK_PACKAGE_NAME exposure)
set(CPACK_PACKAGE_VENDOR "Exposure developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "viewer of exposed communication in multi-GPU training traces")
set(CPACK_PACKAGE_DESCRIPTION
    "Exposure opens traces of data-parallel training recorded with Score-P (OTF2,\n"
    "one archive per rank) or torch.profiler (Chrome-trace JSON) and shows where\n"
    "the wall-clock time goes: compute kernels, NCCL communication, and how much\n"
    "of the communication is hidden behind compute. Statistics are exact unions\n"
    "and intersections of intervals, per rank, per step and per kernel, and\n"
    "collectives are matched across ranks to separate waiting for peers from\n"
    "transferring data.\n"
    "\n"
    "The package contains the exposure GUI (a master timeline with one row per\n"
    "rank and stream, drawn area-true at every zoom, side panels and figure\n"
    "export to PNG, SVG and PDF), the exposure-cli command-line tool (info,\n"
    "stats, render, compare) and a small generated demo trace.")
string(JOIN "" CPACK_PACKAGE_DESCRIPTION ${CPACK_PACKAGE_DESCRIPTION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${EXPOSURE_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_RELEASE ${EXPOSURE_DEBIAN_REVISION})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Strips the staged ELF files and writes their debug symbols as exposure-dbgsym_<version>_<arch>.deb.
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/split-debug.cmake)
include(CPack)

if(EXPOSURE_BUILD_TESTS)
  # Builds the package with cpack into its own folder (so it never touches a package the user built), unpacks it
  # with dpkg -x and runs the installed exposure-cli on the installed demo trace.
  add_test(NAME packaging_deb
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test-package.sh ${CMAKE_CPACK_COMMAND} ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/package-test ${PROJECT_VERSION}-${EXPOSURE_DEBIAN_REVISION}
                   ${EXPOSURE_APP_ID})
  set_tests_properties(packaging_deb PROPERTIES LABELS package SKIP_RETURN_CODE 77 TIMEOUT 300
                                                 FIXTURES_SETUP exposure_deb)
  # lintian on the packages that packaging_deb built: no errors, no warnings (overrides in debian/). lintian and its
  # 160 Perl dependencies are not in the CI install line, so there this test reports itself skipped.
  add_test(NAME packaging_lintian
           COMMAND sh -c "if ! command -v lintian >/dev/null; then
                            echo 'packaging_lintian: skipped: lintian is not installed (apt-get install lintian)'
                            exit 77
                          fi
                          lintian --fail-on error,warning --info \"$0\"/exposure_*.deb \"$0\"/exposure-dbgsym_*.deb"
                   ${CMAKE_CURRENT_BINARY_DIR}/package-test)
  set_tests_properties(packaging_lintian PROPERTIES LABELS package SKIP_RETURN_CODE 77 TIMEOUT 300
                                                    FIXTURES_REQUIRED exposure_deb)
  # The desktop entry and the AppStream metadata as the validators of the desktops and software centres see them.
  add_test(NAME packaging_validate
           COMMAND sh -c "desktop-file-validate \"$0\" && appstreamcli validate --no-net \"$1\""
                   ${CMAKE_CURRENT_SOURCE_DIR}/${EXPOSURE_APP_ID}.desktop
                   ${CMAKE_CURRENT_SOURCE_DIR}/${EXPOSURE_APP_ID}.metainfo.xml)
  set_tests_properties(packaging_validate PROPERTIES LABELS package)
endif()
