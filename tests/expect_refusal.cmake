# Runs a program (COMMAND, a ;-list) that must refuse its input: exit status 1 (or EXIT), exactly one
# line on stderr besides its INFO log lines, matching EXPECT, and no line of stdout matching NOT_IN_OUTPUT (when set): a refusal
# is one line naming the problem, never a signal, a traceback, several lines, or a silent success.
if(NOT DEFINED EXIT)
    set(EXIT 1)
endif()
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("${out}${err}")
if(NOT rc STREQUAL "${EXIT}")
    message(FATAL_ERROR "exited with '${rc}', not ${EXIT}")
endif()
# The seeds log their devices on stderr first, as TensorFlow's TPU programs do ("INFO:tpudsl:..."):
# those lines are not the refusal.
string(REGEX REPLACE "(^|\n)INFO:[^\n]*" "" one "${err}")
string(REGEX REPLACE "^\n+" "" one "${one}")
string(REGEX REPLACE "\n$" "" one "${one}")
if(one STREQUAL "" OR one MATCHES "\n")
    message(FATAL_ERROR "stderr, less its INFO lines, is not exactly one line")
endif()
if(NOT one MATCHES "${EXPECT}")
    message(FATAL_ERROR "expected /${EXPECT}/ on stderr")
endif()
if(NOT_IN_OUTPUT AND out MATCHES "${NOT_IN_OUTPUT}")
    message(FATAL_ERROR "/${NOT_IN_OUTPUT}/ is in the output: the program went on")
endif()
