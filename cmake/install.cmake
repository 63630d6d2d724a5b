# `cmake --install BUILD --prefix P`: the programs, the libraries and their public headers, the
# injection library and the tools' MPI module, the CMake package (find_package(npuscope): npuscope::emulator, ::collector,
# ::importer, ::analyzer, ::comparator, ::viewer, ::opkit, ::comm, ::hooks_api) and npuscope.pc (the emulator, for pkg-config).
# Included from the top-level CMakeLists.txt after every folder, so that the targets exist.
# tests/install/sdk_install_test.sh installs into a temporary prefix and builds a program against it.
include(CMakePackageConfigHelpers)

set(NPUSCOPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/npuscope)
# The libraries a program can build against, exported as npuscope::<name>. The viewer's GUI
# (npuscope_viewer_app, ImGui + GLFW + OpenGL) is the npuscope-viewer program only, not a library
# of the SDK: its header is not installed either.
# The importer comes with the comparator, which reads msprobe dumps with it (dump_sides.h).
set(NPUSCOPE_SDK_TARGETS npuscope_hooks_api npuscope_emulator npuscope_opkit npuscope_comm npuscope_collector
                         npuscope_importer npuscope_analyzer npuscope_comparator npuscope_viewer)
foreach(target ${NPUSCOPE_SDK_TARGETS})
  string(REPLACE "npuscope_" "" name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  # Each folder names its include/ for the build tree ($<BUILD_INTERFACE:...>); the installed
  # targets get include/ under the prefix (INCLUDES DESTINATION below).
  # The public headers use C++20.
  set_property(TARGET ${target} APPEND PROPERTY INTERFACE_COMPILE_FEATURES cxx_std_20)
endforeach()

install(TARGETS ${NPUSCOPE_SDK_TARGETS}
  EXPORT npuscopeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(folder runtime_hooks emulator opkit comm collector importer analyzer comparator viewer)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/include/npuscope/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/npuscope
          PATTERN viewer_app.h EXCLUDE)
endforeach()

# The programs find lib/ through their RPATH (CMAKE_INSTALL_RPATH); npuscope finds what it loads in
# lib/npuscope/ relative to itself (`npuscope run` the injection library, a command under mpirun the
# MPI module, exec, compare and calibrate the emulator commands' module: cli/src/shipped_files.h),
# and `npuscope view` npuscope-viewer beside it. The emulator commands' module finds lib/ from
# lib/npuscope/.
install(TARGETS npuscope npuscope-viewer RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS npuscope_inject npuscope_tool_scaleout_mpi npuscope_emulator_commands
        LIBRARY DESTINATION ${NPUSCOPE_INSTALL_MODULEDIR})
file(RELATIVE_PATH npuscope_module_to_lib /prefix/${NPUSCOPE_INSTALL_MODULEDIR} /prefix/${CMAKE_INSTALL_LIBDIR})
set_target_properties(npuscope_emulator_commands PROPERTIES INSTALL_RPATH "$ORIGIN/${npuscope_module_to_lib}")

install(EXPORT npuscopeTargets NAMESPACE npuscope:: DESTINATION ${NPUSCOPE_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/npuscopeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/npuscopeConfig.cmake
                              INSTALL_DESTINATION ${NPUSCOPE_INSTALL_CMAKEDIR})
# 0.x: a new minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/npuscopeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/npuscopeConfig.cmake ${PROJECT_BINARY_DIR}/npuscopeConfigVersion.cmake
        DESTINATION ${NPUSCOPE_INSTALL_CMAKEDIR})

# npuscope.pc finds the prefix from its own place (${pcfiledir}), so the same file serves any
# --prefix given at install time.
set(NPUSCOPE_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH NPUSCOPE_PC_TO_PREFIX /prefix/${NPUSCOPE_PC_DIR} /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/npuscope.pc.in ${PROJECT_BINARY_DIR}/npuscope.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/npuscope.pc DESTINATION ${NPUSCOPE_PC_DIR})
