# `make package` (cpack -G DEB in the build directory): one .deb with the programs, the SDK and the
# injection library under /usr, as cmake/install.cmake lays them out. The runtime dependencies come
# from dpkg-shlibdeps (dpkg-dev) reading the binaries (it follows their $ORIGIN RUNPATH to the
# emulator inside the package), plus the OpenBLAS build below; tests/install/deb_package_test.sh
# checks them.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME npuscope)
set(CPACK_PACKAGE_VENDOR npuscope)
set(CPACK_PACKAGE_CONTACT "npuscope developers <npuscope@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Profiler, accuracy comparison and timeline viewer for an emulated NPU")
set(CPACK_PACKAGE_DESCRIPTION "npuscope run profiles a program on the emulated NPU into a SQLite trace;
npuscope analyze, compare, export and view read it. With the C++ SDK (headers,
static libraries, the emulator, a CMake package and npuscope.pc).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps names any libopenblas.so.0 provider (libopenblas0); the emulator's RUNPATH points at
# the OpenMP build, which is the one it must load (Note in the top-level CMakeLists.txt).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-openmp")
# The Python package npuscope.torch imports Debian's torch (its C++ library, libtorch1.13, comes
# from dpkg-shlibdeps).
if(TARGET npuscope_torch)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", python3-torch")
endif()
# Building against the SDK's static libraries (find_package(npuscope)) needs their headers and
# link dependencies; running the tools does not.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "libsqlite3-dev, libzstd-dev, nlohmann-json3-dev, libyaml-cpp-dev, zlib1g-dev, libsimdjson-dev, pkg-config")
include(CPack)
