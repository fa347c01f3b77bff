# SPDX-License-Identifier: GPL-3.0-or-later
# cmake -DCLI=<exposure-cli> -DOUT=<file.h2m> -P man-commands.cmake
# Writes a help2man include file with a COMMAND DETAILS section: the --help text of each exposure-cli command,
# verbatim, so that the man page documents every option (help2man itself reads only the top-level --help).
set(text "[COMMAND DETAILS]\n")
foreach(cmd IN ITEMS info stats render compare)
  execute_process(COMMAND ${CLI} ${cmd} --help RESULT_VARIABLE rc OUTPUT_VARIABLE help ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR help STREQUAL "")
    message(FATAL_ERROR "man-commands.cmake: '${CLI} ${cmd} --help' failed (${rc}): ${err}")
  endif()
  if(NOT help MATCHES "\n$")
    string(APPEND help "\n")
  endif()
  # roff: a backslash is \e; - is \- (a minus, so that options copied from the page work); a line starting with
  # . or ' would be a request, \& defuses it.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REPLACE "-" "\\-" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(APPEND text ".SS \"exposure\\-cli ${cmd}\"\n.nf\n${help}.fi\n")
endforeach()
file(WRITE "${OUT}" "${text}")
