# Runs a multi-worker job in which one worker fails (tests/mpi/failing_worker.cpp) and passes when the
# job ends on its own, with a non-zero status and the expected message, within TIMEOUT seconds: a job
# left waiting in a step's messages fails it.
#   cmake -DCOMMAND=<mpirun ...;program;kill|throw;rank> -DEXPECT=<regex> -DTIMEOUT=60 -P expect_job_ends.cmake
string(TIMESTAMP start "%s")
execute_process(COMMAND ${COMMAND} TIMEOUT ${TIMEOUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP stop "%s")
math(EXPR seconds "${stop} - ${start}")
message("${out}${err}")
if(rc MATCHES "timeout")
    message(FATAL_ERROR "the job did not end within ${TIMEOUT} s after a worker failed")
endif()
if(rc EQUAL 0)
    message(FATAL_ERROR "the job ended with status 0 although a worker failed")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
    message(FATAL_ERROR "the job ended (status ${rc}) without the expected message: ${EXPECT}")
endif()
message("the job ended in ${seconds} s with status ${rc}, as expected")
