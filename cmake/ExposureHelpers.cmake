# SPDX-License-Identifier: GPL-3.0-or-later
# Shared compile settings and the test helper.

add_library(exposure_warnings INTERFACE)
target_compile_options(exposure_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow)
# CI (the `ci` preset) turns every warning into an error, so warnings stay at zero.
option(EXPOSURE_WERROR "Treat compiler warnings as errors" OFF)
if(EXPOSURE_WERROR)
  target_compile_options(exposure_warnings INTERFACE -Werror)
endif()
target_compile_definitions(exposure_warnings INTERFACE
  QT_NO_CAST_FROM_ASCII QT_NO_CAST_TO_ASCII QT_USE_QSTRINGBUILDER QT_NO_FOREACH QT_NO_URL_CAST_FROM_STRING)

# exposure_add_test(NAME name SOURCES a.cpp ... LIBS lib ... [LABELS unit|gui] [TIMEOUT s] [SHARED_DATA])
# Builds a Qt Test executable and registers it with CTest under the offscreen platform. SHARED_DATA: a test of real
# data in ../shared (tests/support/shareddata.h): its exit code 77 is reported as Skipped, and it carries the label
# `data`.
function(exposure_add_test)
  cmake_parse_arguments(T "SHARED_DATA" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE Qt6::Test exposure_warnings ${T_LIBS})
  # One include root for the tests' shared helpers: #include "support/testtraces.h".
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${T_NAME} PRIVATE
    EXPOSURE_SHARED_TRACES="${PROJECT_SOURCE_DIR}/../shared/traces"
    EXPOSURE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;QT_LOGGING_RULES=qt.qpa.*=false"
    LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
  if(T_SHARED_DATA)
    set_property(TEST ${T_NAME} APPEND PROPERTY LABELS data)
    set_tests_properties(${T_NAME} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()
