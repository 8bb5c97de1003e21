# Version check of the dyng CMake package. Before 1.0 the minor version breaks the ABI, so a
# request is compatible when major and minor match and the installed patch is not older.
set(PACKAGE_VERSION "0.1.0")

set(PACKAGE_VERSION_COMPATIBLE FALSE)
set(PACKAGE_VERSION_EXACT FALSE)
if(PACKAGE_FIND_VERSION)
    if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
        set(PACKAGE_VERSION_EXACT TRUE)
    endif()
    string(REPLACE "." ";" _dyng_have "${PACKAGE_VERSION}")
    list(GET _dyng_have 0 _dyng_have_major)
    list(GET _dyng_have 1 _dyng_have_minor)
    if(PACKAGE_FIND_VERSION_MAJOR STREQUAL _dyng_have_major
       AND PACKAGE_FIND_VERSION_MINOR STREQUAL _dyng_have_minor
       AND NOT PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION)
        set(PACKAGE_VERSION_COMPATIBLE TRUE)
    endif()
else()
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()

# A 64-bit library cannot serve a 32-bit project.
if(CMAKE_SIZEOF_VOID_P AND NOT CMAKE_SIZEOF_VOID_P EQUAL 8)
    set(PACKAGE_VERSION "${PACKAGE_VERSION} (64bit)")
    set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
