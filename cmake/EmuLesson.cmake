# gpu100_emu_lesson(): a day's lesson as a test on the emulator's metrics (label emu).
#
#   gpu100_emu_lesson(day010
#     ARGS   "--rows 64 --cols 96"                  # the run (plus --iters 1 --warmup 0)
#     ASSERT "naive.global_store_sectors == 32 * naive.global_store_requests"
#            "padded.shared_load_wavefronts == padded.shared_load_requests" ...)
#
# The test NAME.emu.lesson runs the day under the emulator with --json and evaluates each
# ASSERT, a Python expression over the versions' metrics (cmake/check_metrics.py says what it
# can read); it fails if the run fails or any expression is false, printing the values read.
# Expected values belong in the expressions as the code and the hardware model imply them,
# never as what the emulator printed. Pick ARGS that keep the run small: the counts per request
# are what the lesson is about, and they do not need a large problem.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(GPU100_CHECK_METRICS ${CMAKE_CURRENT_LIST_DIR}/check_metrics.py)

function(gpu100_emu_lesson name)
  cmake_parse_arguments(PARSE_ARGV 1 L "" "ARGS" "ASSERT")
  if(L_UNPARSED_ARGUMENTS OR NOT L_ASSERT)
    message(FATAL_ERROR "gpu100_emu_lesson(${name}): ARGS \"...\" ASSERT \"expr\" ... expected")
  endif()
  if(NOT TARGET gpu100_emu)
    return()
  endif()
  separate_arguments(args UNIX_COMMAND "${L_ARGS}")
  set(asserts)
  foreach(a IN LISTS L_ASSERT)
    list(APPEND asserts --assert "${a}")
  endforeach()
  add_test(NAME ${name}.emu.lesson
           COMMAND ${Python3_EXECUTABLE} ${GPU100_CHECK_METRICS} ${asserts}
                   -- $<TARGET_FILE:${name}> ${args} --iters 1 --warmup 0)
  gpu100_emulated(TESTS ${name}.emu.lesson TIMEOUT 600)
endfunction()
