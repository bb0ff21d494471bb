# A multi-worker job relaunched after a worker died resumes from the chief's backup to the bits of a run
# that never failed: runs tests/mpi/failing_worker three times, uninterrupted (the reference weights),
# with worker 1 killed in epoch 2 (the backups of epochs 0 and 1 left in WORK/backup), and again, which
# resumes; the last run's weights file must equal the reference's byte for byte.
#   cmake -DMPIRUN=<mpirun;-n;2;...> -DPROGRAM=<failing_worker> -DWORK=<dir> -P expect_resume.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(common --epochs 4 --save)

execute_process(COMMAND ${MPIRUN} ${PROGRAM} none 1 --backup ${WORK}/reference_backup ${common} ${WORK}/reference.weights
                TIMEOUT 120 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK}/reference.weights)
    message(FATAL_ERROR "the uninterrupted run failed (${rc}):\n${out}${err}")
endif()

execute_process(COMMAND ${MPIRUN} ${PROGRAM} kill 1 --fail-epoch 2 --backup ${WORK}/backup ${common} ${WORK}/resumed.weights
                TIMEOUT 60 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR rc MATCHES "timeout")
    message(FATAL_ERROR "the run with a killed worker did not end with an error (${rc}):\n${out}${err}")
endif()
if(NOT EXISTS ${WORK}/backup/backup.tpudsl OR EXISTS ${WORK}/resumed.weights)
    message(FATAL_ERROR "the killed run left no backup, or finished:\n${out}${err}")
endif()

execute_process(COMMAND ${MPIRUN} ${PROGRAM} none 1 --backup ${WORK}/backup ${common} ${WORK}/resumed.weights
                TIMEOUT 120 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK}/resumed.weights)
    message(FATAL_ERROR "the relaunched run failed (${rc}):\n${out}${err}")
endif()
if(NOT out MATCHES "resumed from the backup")   # a fresh start would reach the same weights too
    message(FATAL_ERROR "the relaunched run did not resume from the backup:\n${out}${err}")
endif()

file(SHA256 ${WORK}/reference.weights reference)
file(SHA256 ${WORK}/resumed.weights resumed)
if(NOT reference STREQUAL resumed)
    message(FATAL_ERROR "the resumed job's weights differ from the uninterrupted job's (SHA-256 ${resumed} vs ${reference})")
endif()
message("the relaunched job resumed from the chief's backup to the uninterrupted job's weights (SHA-256 ${resumed})")
file(REMOVE_RECURSE ${WORK})
