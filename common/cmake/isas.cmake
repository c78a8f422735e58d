# The target's SIMD ISAs, read from its one list (common/include/nbody/isas_<processor>.inc): each
# line NBODY_ISA(id, ..., "flags") names an ISA and the compiler flags of its kernel files.
#   NBODY_ISA_PROCESSOR  x86_64 or aarch64
#   NBODY_ISAS_INC       the list's include name, for the compile definition of the same name
#   NBODY_ISAS           the ids, narrowest first
#   NBODY_ISA_FLAGS_<id> the flags (a list)
# nbody_isa_sources(<target> <pattern>) adds a file per ISA (<pattern> with @ISA@ for the id) to
# <target>, each with its ISA's flags and FMA contraction.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(NBODY_ISA_PROCESSOR x86_64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(NBODY_ISA_PROCESSOR aarch64)
else()
  message(FATAL_ERROR "nbody-fair's SIMD kernels exist for x86-64 and aarch64, not for "
                      "${CMAKE_SYSTEM_PROCESSOR}: add common/include/nbody/isas_<processor>.inc")
endif()
set(NBODY_ISAS_INC "nbody/isas_${NBODY_ISA_PROCESSOR}.inc")
set(nbody_isa_list_file ${CMAKE_CURRENT_LIST_DIR}/../include/${NBODY_ISAS_INC})
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${nbody_isa_list_file})
file(STRINGS ${nbody_isa_list_file} nbody_isa_lines REGEX "^NBODY_ISA\\(")
set(NBODY_ISAS)
foreach(line IN LISTS nbody_isa_lines)
  if(NOT line MATCHES "^NBODY_ISA\\(([a-z0-9_]+),.*\"([^\"]*)\"\\)$")
    message(FATAL_ERROR "${nbody_isa_list_file}: cannot read the ISA line: ${line}")
  endif()
  list(APPEND NBODY_ISAS ${CMAKE_MATCH_1})
  set(NBODY_ISA_FLAGS_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
endforeach()
if(NOT NBODY_ISAS)
  message(FATAL_ERROR "${nbody_isa_list_file} lists no ISA")
endif()

function(nbody_isa_sources target pattern)
  foreach(isa IN LISTS NBODY_ISAS)
    string(REPLACE "@ISA@" "${isa}" file "${pattern}")
    target_sources(${target} PRIVATE ${file})
    set_source_files_properties(${file} PROPERTIES COMPILE_OPTIONS
                                "${NBODY_ISA_FLAGS_${isa}};-ffp-contract=fast")
  endforeach()
endfunction()
