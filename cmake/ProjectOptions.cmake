# Flags for the project's own programs (tests, examples, benchmarks); the tpudsl target itself
# imposes none.
add_library(tpudsl_project_options INTERFACE)
target_link_libraries(tpudsl_project_options INTERFACE tpudsl::tpudsl)
target_compile_options(tpudsl_project_options INTERFACE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic>
    # options structs are filled with designated initializers; leaving members out is the point
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wno-missing-field-initializers>)
option(TPUDSL_WERROR "Treat warnings in the project's own programs as errors" OFF)
if(TPUDSL_WERROR)
    target_compile_options(tpudsl_project_options INTERFACE $<$<CXX_COMPILER_ID:GNU,Clang>:-Werror>)
endif()
if(TPUDSL_NATIVE)
    target_compile_options(tpudsl_project_options INTERFACE $<$<CXX_COMPILER_ID:GNU,Clang>:-march=native>)
endif()
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
