# CMake package of libdyng: find_package(dyng) gives
#   dyng::dyng         the shared library (libdyng.so, SONAME libdyng.so.MAJOR.MINOR)
#   dyng::dyng_static  the static library (libdyng.a) with its system link dependencies
# Installed by scripts/install.sh into PREFIX/lib/cmake/dyng/; every path is relative to this file,
# so the installed tree can be moved.

include(CMakeFindDependencyMacro)
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_dependency(Threads)

get_filename_component(_dyng_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(_dyng_soname "libdyng.so.${dyng_VERSION_MAJOR}.${dyng_VERSION_MINOR}")
if(NOT DEFINED dyng_VERSION_MAJOR OR dyng_VERSION_MAJOR STREQUAL "")
    # Loaded directly (include()), without find_package's version step.
    include("${CMAKE_CURRENT_LIST_DIR}/dyngConfigVersion.cmake")
    string(REPLACE "." ";" _dyng_parts "${PACKAGE_VERSION}")
    list(GET _dyng_parts 0 _dyng_major)
    list(GET _dyng_parts 1 _dyng_minor)
    set(_dyng_soname "libdyng.so.${_dyng_major}.${_dyng_minor}")
endif()

if(NOT TARGET dyng::dyng)
    add_library(dyng::dyng SHARED IMPORTED)
    set_target_properties(dyng::dyng PROPERTIES
        IMPORTED_LOCATION "${_dyng_prefix}/lib/${_dyng_soname}"
        IMPORTED_SONAME "${_dyng_soname}"
        INTERFACE_INCLUDE_DIRECTORIES "${_dyng_prefix}/include")
endif()

if(NOT TARGET dyng::dyng_static)
    add_library(dyng::dyng_static STATIC IMPORTED)
    set_target_properties(dyng::dyng_static PROPERTIES
        IMPORTED_LOCATION "${_dyng_prefix}/lib/libdyng.a"
        INTERFACE_INCLUDE_DIRECTORIES "${_dyng_prefix}/include"
        INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m")
endif()

set(dyng_INCLUDE_DIRS "${_dyng_prefix}/include")
set(dyng_LIBRARIES dyng::dyng)
unset(_dyng_prefix)
unset(_dyng_soname)
