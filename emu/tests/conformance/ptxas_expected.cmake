# cmake -DNVCC=nvcc -DSRC=file.cu -DARCH=90 "-DFLAGS=..." -DOUT=expected.h -P ptxas_expected.cmake
# Compiles SRC's device code for sm_ARCH with `ptxas -v` and writes what ptxas reports for each
# kernel as a C++ initializer list: constexpr Expected kExpected[] = {{"name", registers, stack
# frame bytes}, ...}; (the Expected struct is the program's). This is how a conformance program
# learns the register counts without asking the runtime it checks.
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
get_filename_component(dir "${SRC}" DIRECTORY)
execute_process(COMMAND ${NVCC} -cubin -arch=sm_${ARCH} ${flags} -Xptxas -v -I${dir} -o "${OUT}.cubin" "${SRC}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(REMOVE "${OUT}.cubin")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -Xptxas -v failed on ${SRC}:\n${out}${err}")
endif()
string(REPLACE "\n" ";" lines "${out}${err}")
set(entries "")
set(current "")
set(frame 0)
foreach(line IN LISTS lines)
  if(line MATCHES "Compiling entry function '([^']+)'")
    set(current "${CMAKE_MATCH_1}")
    set(frame 0)
  elseif(current AND line MATCHES "^ *([0-9]+) bytes stack frame")
    set(frame ${CMAKE_MATCH_1})
  elseif(current AND line MATCHES "Used ([0-9]+) registers")
    string(APPEND entries "    {\"${current}\", ${CMAKE_MATCH_1}, ${frame}},\n")
    set(current "")
  endif()
endforeach()
if(NOT entries)
  message(FATAL_ERROR "ptxas -v reported no kernel for ${SRC}:\n${out}${err}")
endif()
file(WRITE "${OUT}.tmp" "// Written by ptxas_expected.cmake from `ptxas -v` on ${SRC} (sm_${ARCH}).\nconstexpr Expected kExpected[] = {\n${entries}};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
