# A seed example under each --strategy (mpi.seed.*): PROGRAM with ARGS (a ;-list) runs with
# `--strategy one`, `--strategy tpu8`, and under MPIRUN (a ;-list: mpirun, -np 2, its flags) with
# `--strategy multiworker`, each with --save-weights and --backup-dir in WORK (the chief alone writes
# the backup; it must not change the path). Each run must exit 0 and print "Test accuracy: X" exactly
# once (under mpirun: the chief alone); the three X must be equal and the three weights files
# (tpudsl's own format) byte for byte the same: 2 processes give the bits of one core and of 8
# replicas.
foreach(var PROGRAM ARGS MPIRUN WORK)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "seed_strategies.cmake: -D${var}=... is required")
    endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(accuracy "")
foreach(strategy one tpu8 multiworker)
    set(command ${PROGRAM} ${ARGS} --strategy ${strategy} --save-weights ${WORK}/${strategy}.weights
                --backup-dir ${WORK}/backup_${strategy})
    if(strategy STREQUAL "multiworker")
        list(PREPEND command ${MPIRUN})
    endif()
    string(REPLACE ";" " " shown "${command}")
    message(STATUS "${shown}")
    execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                    TIMEOUT 120)
    message("${out}${err}")
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "--strategy ${strategy}: exited with ${rc}")
    endif()
    if(strategy STREQUAL "multiworker" AND NOT "${out}${err}" MATCHES "Num Workers: 2\n")
        message(FATAL_ERROR "--strategy multiworker: the chief did not report 2 workers")
    endif()
    string(REGEX MATCHALL "Test accuracy: [0-9]+\\.[0-9]+" lines "${out}")   # two lines may run together
    list(LENGTH lines printed)
    if(NOT printed EQUAL 1)
        message(FATAL_ERROR "--strategy ${strategy}: 'Test accuracy' printed ${printed} times, expected once")
    endif()
    string(REGEX MATCH "Test accuracy: ([0-9]+\\.[0-9]+)" unused "${lines}")
    message(STATUS "--strategy ${strategy}: test accuracy ${CMAKE_MATCH_1}")
    if(accuracy STREQUAL "")
        set(accuracy ${CMAKE_MATCH_1})
    elseif(NOT CMAKE_MATCH_1 STREQUAL accuracy)
        message(FATAL_ERROR "--strategy ${strategy}: test accuracy ${CMAKE_MATCH_1}, --strategy one: ${accuracy}")
    endif()
    if(NOT EXISTS ${WORK}/${strategy}.weights)
        message(FATAL_ERROR "--strategy ${strategy}: no weights file ${WORK}/${strategy}.weights")
    endif()
endforeach()

foreach(strategy tpu8 multiworker)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/one.weights ${WORK}/${strategy}.weights
                    RESULT_VARIABLE differ)
    if(differ)
        message(FATAL_ERROR "--strategy ${strategy}: the weights differ from --strategy one's")
    endif()
endforeach()
message(STATUS "one, tpu8 and multiworker (2 processes): the same weights, bit for bit, and test accuracy ${accuracy}")
