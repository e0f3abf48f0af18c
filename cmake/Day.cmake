# gpu100_day(): one call per day folder adds the program, its tests and its compiled-code checks.
#
#   gpu100_day(day017 matmul_warptiling.cu
#     LIBS      cublas              # CUDA::<name> targets the day links (cublas, cublasLt, ...)
#     ARCHS     90a                 # replaces the configured architectures (Hopper-only days)
#     PTX_ARCH  90                  # virtual architecture of the PTX check (default 90 / ARCHS)
#     PTX       "mma\\.sync" ...    # regular expressions that must occur in the day's PTX
#     ALLOW_SPILLS "why"            # the day's comment explains its register spills
#     SIZES     m n k               # size options the cli tests feed bad values
#     TEST_ARGS "--m 1 --n 1 --k 1" # more gpu test cases (each string is one run); --quick always runs
#     EMU_ARGS  "--m 33 --n 7 --k 65" # the extra cases under the emulator, replacing TEST_ARGS
#     EMU_QUICK "--k 2003"          # added to the emulated --quick run (a size --quick would set)
#     RDC                           # relocatable device code and the device runtime (kernels
#                                   # that launch kernels: dynamic parallelism)
#   )
#
# Tests (labels): NAME.gpu.*  (gpu: run the kernels, exit 77 = skipped without a device)
#                 NAME.emu.*  (emu: the same runs under the emulator, emu/; no GPU needed)
#                 NAME.cli.*  (cli: bad sizes and kernels -> exit 2 and one line; no-device paths)
#                 NAME.ptx    (ptx: instructions present, no spill stores)
#                 NAME.ptx.smNN (ptx: no spill stores for the oldest architecture built, too)
#
# Every gpu case has an emu twin (NAME.emu.quick, NAME.emu.caseN): the same program and arguments
# plus --iters 1 --warmup 0, with the emulator's libcudart.so.13 first on the library path and
# GPU100_REQUIRE_GPU=1 and GPU100_REQUIRE_EMULATOR=1, so it passes only by running emulated, and
# with every check of the emulator on (GPU100_EMU_CHECK=all, or what GPU100_EMU_CHECKS says: a race,
# an uninitialized read or a synchronization error fails it). It
# skips (77) only when no version of the day can run there (a day whose versions all call cuBLAS).
# The emulator interprets every thread on the CPU, far slower than a GPU: where a TEST_ARGS case
# would take it more than a few minutes, give EMU_ARGS, a list that replaces TEST_ARGS under the
# emulator (EMU_ARGS with no strings: --quick only), and EMU_QUICK, sizes added to the emulated
# --quick run (an explicit size wins over --quick's). Keep at least one case at sizes that are no
# multiple of any tile or block (--quick is one): the edges are where kernels go wrong.

set(GPU100_CHECK_EXIT ${CMAKE_CURRENT_LIST_DIR}/check_exit.cmake)
set(GPU100_CHECK_PTX  ${CMAKE_CURRENT_LIST_DIR}/check_ptx.cmake)
set(GPU100_DAY_COUNT 0 CACHE INTERNAL "")
find_program(GPU100_GIT git)
find_program(GPU100_PTXAS ptxas HINTS ${CUDAToolkit_BIN_DIR} REQUIRED)

# A test that runs PROGRAM ARGS... and expects exit code EXPECT and stderr/stdout matching MATCH.
function(gpu100_expect_exit test_name label expect match)
  add_test(NAME ${test_name}
           COMMAND ${CMAKE_COMMAND} -DEXPECT=${expect} "-DMATCH=${match}"
                   -P ${GPU100_CHECK_EXIT} -- ${ARGN})
  set_tests_properties(${test_name} PROPERTIES LABELS ${label} TIMEOUT 60)
endfunction()

function(gpu100_day name source)
  cmake_parse_arguments(PARSE_ARGV 2 D "RDC" "PTX_ARCH;ALLOW_SPILLS"
                        "LIBS;ARCHS;PTX;SIZES;TEST_ARGS;EMU_ARGS;EMU_QUICK")
  if(D_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "gpu100_day(${name}): unknown arguments ${D_UNPARSED_ARGUMENTS}")
  endif()
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  get_filename_component(topic ${source} NAME_WE)

  # The git blob hash of the source identifies what a result in results/ measured.
  set(hash unknown)
  if(GPU100_GIT)
    execute_process(COMMAND ${GPU100_GIT} hash-object ${src} OUTPUT_VARIABLE hash
                    RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT rc EQUAL 0)
      set(hash unknown)
    endif()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})

  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE gpu100::common)
  foreach(lib IN LISTS D_LIBS)
    if(TARGET CUDA::${lib})
      target_link_libraries(${name} PRIVATE CUDA::${lib})
    else()
      target_link_libraries(${name} PRIVATE ${lib})
    endif()
  endforeach()
  target_compile_definitions(${name} PRIVATE GPU100_DAY="${name}" GPU100_TOPIC="${topic}"
                                             GPU100_SOURCE_HASH="${hash}")
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  if(D_ARCHS)
    set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${D_ARCHS}")
  endif()
  if(D_RDC)
    find_library(GPU100_CUDADEVRT cudadevrt HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
    set_target_properties(${name} PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
    target_link_libraries(${name} PRIVATE ${GPU100_CUDADEVRT})
  endif()

  # --- gpu: the kernels at --quick sizes and at every extra (odd) size ---------------------
  add_test(NAME ${name}.gpu.quick COMMAND ${name} --quick)
  set(case 0)
  foreach(args IN LISTS D_TEST_ARGS)
    math(EXPR case "${case} + 1")
    separate_arguments(arg_list UNIX_COMMAND "${args}")
    add_test(NAME ${name}.gpu.case${case} COMMAND ${name} ${arg_list})
  endforeach()
  get_property(gpu_tests DIRECTORY PROPERTY TESTS)
  list(FILTER gpu_tests INCLUDE REGEX "^${name}\\.gpu\\.")
  set_tests_properties(${gpu_tests} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)

  # --- emu: the gpu cases under the emulator ---------------------------------------------------
  if(TARGET gpu100_emu)
    if(DEFINED D_EMU_ARGS OR "EMU_ARGS" IN_LIST D_KEYWORDS_MISSING_VALUES)
      set(emu_cases "${D_EMU_ARGS}")
    else()
      set(emu_cases "${D_TEST_ARGS}")
    endif()
    # One timed run: its time is the emulator's CPU time, meaningless as GPU speed anyway. A case
    # that sets --iters or --warmup itself keeps its own (the CLI refuses an option twice).
    separate_arguments(emu_quick UNIX_COMMAND "${D_EMU_QUICK}")
    add_test(NAME ${name}.emu.quick COMMAND ${name} --quick --iters 1 --warmup 0 ${emu_quick})
    set(case 0)
    foreach(args IN LISTS emu_cases)
      math(EXPR case "${case} + 1")
      separate_arguments(arg_list UNIX_COMMAND "${args}")
      if(NOT "--iters" IN_LIST arg_list)
        list(APPEND arg_list --iters 1)
      endif()
      if(NOT "--warmup" IN_LIST arg_list)
        list(APPEND arg_list --warmup 0)
      endif()
      add_test(NAME ${name}.emu.case${case} COMMAND ${name} ${arg_list})
    endforeach()
    get_property(emu_tests DIRECTORY PROPERTY TESTS)
    list(FILTER emu_tests INCLUDE REGEX "^${name}\\.emu\\.")
    # REQUIRED_FILES: without the emulator's library the run would reach the real runtime (a GPU,
    # or no device); ctest then reports the test as not run instead.
    set_tests_properties(${emu_tests} PROPERTIES
      LABELS emu SKIP_RETURN_CODE 77 TIMEOUT 600
      ENVIRONMENT "GPU100_REQUIRE_GPU=1;GPU100_REQUIRE_EMULATOR=1;GPU100_EMU_CHECK=${GPU100_EMU_CHECKS}"
      ENVIRONMENT_MODIFICATION "LD_LIBRARY_PATH=path_list_prepend:${GPU100_EMU_LIB_DIR}"
      REQUIRED_FILES "${GPU100_EMU_LIB_DIR}/libcudart.so.13")
  endif()

  # --- cli: what is the day's own: its sizes, its kernels, the no-device paths ---------------
  # How any option's text is parsed (malformed, out of its type, out of its range, quoted as typed)
  # is tested once, in common/'s unit tests; here each size option is shown to be one the day
  # declares, refusing the bottom and the top of its range.
  foreach(opt IN LISTS D_SIZES)
    set(range "^${name}: error: --${opt} must be between 1 and [0-9]+, got")
    gpu100_expect_exit(${name}.cli.${opt}_zero cli 2 "${range} '0'[^\n]*\n?$"
                       $<TARGET_FILE:${name}> --${opt} 0)
    gpu100_expect_exit(${name}.cli.${opt}_too_large cli 2 "${range} '999999999999999'[^\n]*\n?$"
                       $<TARGET_FILE:${name}> --${opt} 999999999999999)
  endforeach()
  gpu100_expect_exit(${name}.cli.unknown_kernel cli 2
                     "^${name}: error: unknown kernel 'no_such_kernel'; this day has: [^\n]+\n?$"
                     $<TARGET_FILE:${name}> --kernel no_such_kernel)
  gpu100_expect_exit(${name}.cli.no_device_skips cli 77 "SKIP: " $<TARGET_FILE:${name}> --quick)
  gpu100_expect_exit(${name}.cli.no_device_required_fails cli 1 "no CUDA device"
                     $<TARGET_FILE:${name}> --quick)
  # CUDA_VISIBLE_DEVICES=-1 hides every GPU, so these two run the no-device path on any machine.
  set_tests_properties(${name}.cli.no_device_skips PROPERTIES
                       ENVIRONMENT "CUDA_VISIBLE_DEVICES=-1;GPU100_REQUIRE_GPU=0")
  set_tests_properties(${name}.cli.no_device_required_fails PROPERTIES
                       ENVIRONMENT "CUDA_VISIBLE_DEVICES=-1;GPU100_REQUIRE_GPU=1")

  # --- ptx: the instructions the day teaches are in its compiled code; no spill stores --------
  if(D_PTX_ARCH)
    set(ptx_arch ${D_PTX_ARCH})
  elseif(D_ARCHS)
    list(GET D_ARCHS 0 ptx_arch)
  else()
    set(ptx_arch 90)
  endif()
  string(REGEX REPLACE "-(real|virtual)$" "" ptx_arch "${ptx_arch}")
  add_library(${name}_ptx OBJECT ${source})
  target_link_libraries(${name}_ptx PRIVATE gpu100::common)
  target_compile_definitions(${name}_ptx PRIVATE GPU100_DAY="${name}" GPU100_TOPIC="${topic}"
                                                 GPU100_SOURCE_HASH="${hash}")
  set_target_properties(${name}_ptx PROPERTIES CUDA_PTX_COMPILATION ON
                                               CUDA_ARCHITECTURES ${ptx_arch}-virtual)
  set(ptxas_flags "")
  if(D_RDC)
    set_target_properties(${name}_ptx PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
    set(ptxas_flags -c)  # relocatable: the device runtime's functions are resolved at link time
  endif()
  add_dependencies(${name} ${name}_ptx)
  string(REPLACE ";" "@@" patterns "${D_PTX}")
  add_test(NAME ${name}.ptx
           COMMAND ${CMAKE_COMMAND} "-DPTX_FILES=$<TARGET_OBJECTS:${name}_ptx>"
                   "-DPATTERNS=${patterns}" -DPTXAS=${GPU100_PTXAS} -DARCH=${ptx_arch}
                   "-DALLOW_SPILLS=${D_ALLOW_SPILLS}" "-DPTXAS_FLAGS=${ptxas_flags}"
                   -P ${GPU100_CHECK_PTX})
  set_tests_properties(${name}.ptx PROPERTIES LABELS ptx TIMEOUT 120)

  # --- ptx: no spill stores on the oldest architecture built either (sm_80 of "80;90") -------
  # Register allocation differs between architectures (a kernel at its cap on one may spill on
  # the other), and the instruction check above sees one of them only.
  if(NOT D_ARCHS AND NOT D_PTX_ARCH)
    set(built_archs ${CMAKE_CUDA_ARCHITECTURES})
    list(TRANSFORM built_archs REPLACE "-(real|virtual)$" "")
    list(FILTER built_archs INCLUDE REGEX "^[0-9]+$")
    list(SORT built_archs COMPARE NATURAL)
    if(built_archs)
      list(GET built_archs 0 low_arch)
      if(NOT low_arch STREQUAL ptx_arch)
        add_library(${name}_ptx${low_arch} OBJECT ${source})
        target_link_libraries(${name}_ptx${low_arch} PRIVATE gpu100::common)
        target_compile_definitions(${name}_ptx${low_arch} PRIVATE GPU100_DAY="${name}"
                                   GPU100_TOPIC="${topic}" GPU100_SOURCE_HASH="${hash}")
        set_target_properties(${name}_ptx${low_arch} PROPERTIES
                              CUDA_PTX_COMPILATION ON CUDA_ARCHITECTURES ${low_arch}-virtual)
        if(D_RDC)
          set_target_properties(${name}_ptx${low_arch} PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
        endif()
        add_dependencies(${name} ${name}_ptx${low_arch})
        add_test(NAME ${name}.ptx.sm${low_arch}
                 COMMAND ${CMAKE_COMMAND} "-DPTX_FILES=$<TARGET_OBJECTS:${name}_ptx${low_arch}>"
                         -DPTXAS=${GPU100_PTXAS} -DARCH=${low_arch}
                         "-DALLOW_SPILLS=${D_ALLOW_SPILLS}" "-DPTXAS_FLAGS=${ptxas_flags}"
                         -P ${GPU100_CHECK_PTX})
        set_tests_properties(${name}.ptx.sm${low_arch} PROPERTIES LABELS ptx TIMEOUT 120)
      endif()
    endif()
  endif()

  math(EXPR n "${GPU100_DAY_COUNT} + 1")
  set(GPU100_DAY_COUNT ${n} CACHE INTERNAL "")
endfunction()
