# Backend options and the configure summary.
#
# Every optional backend has a tri-state cache option BACKPLANE_USE_<X>:
#   AUTO  use it when found (the default),
#   ON    require it: configuring fails when it is missing,
#   OFF   never use it.
# bp_backend_result(<X> <found> <detail>) records the outcome; the summary at
# the end of configuration prints one line per backend with the reason.

set(BP_BACKENDS "")

function(bp_backend_option name doc)
  set(BACKPLANE_USE_${name} AUTO CACHE STRING "${doc} (AUTO|ON|OFF)")
  set_property(CACHE BACKPLANE_USE_${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${BACKPLANE_USE_${name}}" _mode)
  if(NOT _mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "BACKPLANE_USE_${name}=${BACKPLANE_USE_${name}}: expected AUTO, ON or OFF")
  endif()
  set(BP_MODE_${name} ${_mode} PARENT_SCOPE)
  set(_list ${BP_BACKENDS})
  list(APPEND _list ${name})
  set(BP_BACKENDS ${_list} PARENT_SCOPE)
endfunction()

# Record whether backend <name> will be used, and why.
function(bp_backend_result name found detail)
  if(BP_MODE_${name} STREQUAL "OFF")
    set(BP_HAVE_${name} OFF PARENT_SCOPE)
    set(BP_WHY_${name} "disabled (BACKPLANE_USE_${name}=OFF)" PARENT_SCOPE)
    return()
  endif()
  if(found)
    set(BP_HAVE_${name} ON PARENT_SCOPE)
    set(BP_WHY_${name} "found ${detail}" PARENT_SCOPE)
  else()
    if(BP_MODE_${name} STREQUAL "ON")
      message(FATAL_ERROR "BACKPLANE_USE_${name}=ON but it is missing: ${detail}")
    endif()
    set(BP_HAVE_${name} OFF PARENT_SCOPE)
    set(BP_WHY_${name} "missing: ${detail}" PARENT_SCOPE)
  endif()
endfunction()

function(bp_print_summary)
  message(STATUS "")
  message(STATUS "Backplane ${PROJECT_VERSION} configuration")
  foreach(b ${BP_BACKENDS})
    if(BP_HAVE_${b})
      set(mark "✓")
    else()
      set(mark "✗")
    endif()
    string(LENGTH "${b}" len)
    math(EXPR pad "10 - ${len}")
    string(REPEAT " " ${pad} spaces)
    message(STATUS "  ${mark} ${b}${spaces} ${BP_WHY_${b}}")
  endforeach()
  message(STATUS "  tests: ${BACKPLANE_BUILD_TESTS}  cli: ${BACKPLANE_BUILD_CLI}  python: ${BACKPLANE_BUILD_PYTHON}")
  message(STATUS "")
endfunction()
