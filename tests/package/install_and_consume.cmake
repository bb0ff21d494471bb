# Installs tpudsl from its build tree into PREFIX (fresh), then configures, builds and runs a consumer
# that finds it with find_package(tpudsl CONFIG REQUIRED).
file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${TPUDSL_BUILD_DIR} --prefix ${PREFIX} COMMAND_ERROR_IS_FATAL ANY
                OUTPUT_QUIET)
if(NOT EXISTS ${PREFIX}/share/cmake/tpudsl/tpudslConfig.cmake OR NOT EXISTS ${PREFIX}/include/tpudsl/tpudsl.hpp)
    message(FATAL_ERROR "install into ${PREFIX} lacks the config package or the headers")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${CONSUMER_BUILD} -G ${GENERATOR}
                        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CXX_COMPILER=${CXX} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${CONSUMER_BUILD} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CONSUMER_BUILD}/consumer COMMAND_ERROR_IS_FATAL ANY)
