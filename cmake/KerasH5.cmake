# tpudsl::keras_h5: Keras' HDF5 weights files (include/tpudsl/io/keras_h5.hpp), through HDF5's C
# library. Optional: defined only when HDF5 is found. Linking it defines TPUDSL_WITH_HDF5, with which
# Trainable::save_weights/load_weights take `.weights.h5` and `.h5` paths (docs/interop.md).
#
# CMake's FindHDF5 compiles a C probe, so C is enabled here (a project of C++ only otherwise).
get_property(tpudsl_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT "C" IN_LIST tpudsl_languages)
    enable_language(C)
endif()
find_package(HDF5 COMPONENTS C)
if(HDF5_FOUND)
    message(STATUS "tpudsl: HDF5 ${HDF5_VERSION} found: tpudsl::keras_h5 (Keras' .h5 weights files) is available")
    add_library(tpudsl_keras_h5 INTERFACE)
    add_library(tpudsl::keras_h5 ALIAS tpudsl_keras_h5)
    set_target_properties(tpudsl_keras_h5 PROPERTIES EXPORT_NAME keras_h5)
    target_link_libraries(tpudsl_keras_h5 INTERFACE tpudsl HDF5::HDF5)
    target_compile_definitions(tpudsl_keras_h5 INTERFACE TPUDSL_WITH_HDF5)
    if(TPUDSL_INSTALL)
        install(TARGETS tpudsl_keras_h5 EXPORT tpudslKerasH5Targets)
        install(EXPORT tpudslKerasH5Targets NAMESPACE tpudsl:: DESTINATION ${TPUDSL_CMAKE_DIR})
        export(EXPORT tpudslKerasH5Targets NAMESPACE tpudsl:: FILE ${PROJECT_BINARY_DIR}/tpudslKerasH5Targets.cmake)
    endif()
else()
    message(STATUS "tpudsl: HDF5's C library not found (Debian: libhdf5-dev): tpudsl::keras_h5 is not available")
endif()
