# The emulator as installed for use outside the repository:
#   cmake -DBUILD_DIR=<build folder> -DPROGRAM=<a conformance program> -P install_check.cmake
# installs the build into a fresh temporary prefix (cmake --install), copies the program to a
# folder outside the repository and the build, and runs it there through PREFIX/bin/gpu100-emulate
# with no library path of its own. Passes when the program passes ("N checks, 0 failures") and
# the emulator's exit statistics show that the installed library ran its kernels.
if(NOT BUILD_DIR OR NOT PROGRAM)
  message(FATAL_ERROR "usage: cmake -DBUILD_DIR=... -DPROGRAM=... -P install_check.cmake")
endif()
set(tmp "$ENV{TMPDIR}")
if(NOT tmp)
  set(tmp /tmp)
endif()
string(RANDOM LENGTH 10 tag)
set(prefix "${tmp}/gpu100-emu-install-${tag}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE_RECURSE "${prefix}")
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${prefix} failed (${rc}):\n${out}\n${err}")
endif()
foreach(installed bin/gpu100-emulate lib/gpu100-emu/libcudart.so.13)
  if(NOT EXISTS "${prefix}/${installed}")
    file(REMOVE_RECURSE "${prefix}")
    message(FATAL_ERROR "the install has no ${installed}:\n${out}")
  endif()
endforeach()
set(work "${prefix}/elsewhere")
file(MAKE_DIRECTORY "${work}")
file(COPY "${PROGRAM}" DESTINATION "${work}")
get_filename_component(program_name "${PROGRAM}" NAME)
# Nothing from the build may lead the program to a library: only the launcher's own lookup.
unset(ENV{LD_LIBRARY_PATH})
unset(ENV{GPU100_EMU_LIB_DIR})
set(ENV{GPU100_EMU_STATS} 1)
execute_process(COMMAND "${prefix}/bin/gpu100-emulate" "./${program_name}" WORKING_DIRECTORY "${work}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
file(REMOVE_RECURSE "${prefix}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "[0-9]+ checks, 0 failures" OR NOT err MATCHES "gpu100 emulator: [1-9][0-9]* launches")
  message(FATAL_ERROR "${prefix}/bin/gpu100-emulate ./${program_name} (in ${work}) exited with ${rc}:\n"
                      "stdout:\n${out}\nstderr:\n${err}")
endif()
message(STATUS "PASS: the installed emulator ran ${program_name} outside the repository:\n${out}${err}")
