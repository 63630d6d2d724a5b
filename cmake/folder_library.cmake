# npuscope_folder_library(NAME STATIC|SHARED [PRECOMPILE_HEADERS] [SOURCES file-or-glob...]): the
# library of a folder, made as every folder makes it (README.md "Layout"): npuscope_NAME from the
# folder's src/*.cpp (or the SOURCES given, globs allowed), the alias npuscope::NAME, its public
# headers under include/ (include/npuscope/NAME/) and its private ones under src/; with
# PRECOMPILE_HEADERS, the standard headers precompiled (for a target of many files: Note
# [Precompiled headers]). Its links are the folder's own target_link_libraries.
function(npuscope_folder_library name kind)
  cmake_parse_arguments(PARSE_ARGV 2 arg "PRECOMPILE_HEADERS" "" "SOURCES")
  if(NOT arg_SOURCES)
    set(arg_SOURCES src/*.cpp)
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${arg_SOURCES})
  add_library(npuscope_${name} ${kind} ${sources})
  add_library(npuscope::${name} ALIAS npuscope_${name})
  if(arg_PRECOMPILE_HEADERS)
    npuscope_precompile_headers(npuscope_${name})
  endif()
  target_include_directories(npuscope_${name} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                              PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
endfunction()
