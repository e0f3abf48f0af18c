# gpu100_day(): one call per day folder adds the program, its tests and its compiled-code checks.
#
#   gpu100_day(day017 matmul_warptiling.cu
#     LIBS      cublas              # CUDA::<name> targets the day links (cublas, cublasLt, ...)
#     ARCHS     90a                 # replaces the configured architectures (Hopper-only days)
#     PTX_ARCH  90                  # virtual architecture of the PTX check (default 90 / ARCHS)
#     PTX       "mma\\.sync" ...    # regular expressions that must occur in the day's PTX
#     ALLOW_SPILLS "why"            # the day's comment explains its register spills
#     SIZES     m n k               # size options the cli tests feed bad values
#     TEST_ARGS "--m 1 --n 1 --k 1" "--m 1000 --n 1000 --k 1000" "--m 4097 --n 3 --k 129"
#                                   # more gpu test cases, case1, case2, ... (each string is one
#                                   # run); --quick always runs
#     EMU_REPLACE "2=--m 260 --n 300 --k 129"
#                                   # under the emulator, case 2 runs these arguments instead
#     EMU_SKIP  3                   # under the emulator, case 3 does not run (say why in a comment)
#     EMU_EXTRA "--m 2 --n 2 --k 2" # a case run under the emulator only (numbered after TEST_ARGS)
#     EMU_QUICK "--k 2003"          # added to the emulated --quick run (a size --quick would set)
#     EMU_H100  "--n 100000"        # a case run under the emulator shaped as an H100's 132 SMs
#                                   # (GPU100_EMU_SMS=132): NAME.emu.sms132, for days whose grids
#                                   # follow the SM count (resident grids, cooperative grids)
#     RDC                           # relocatable device code and the device runtime (kernels
#                                   # that launch kernels: dynamic parallelism)
#   )
#
# Tests (labels): NAME.gpu.*  (gpu: run the kernels, exit 77 = skipped without a device)
#                 NAME.emu.*  (emu: the same runs under the emulator, emu/; no GPU needed;
#                              NAME.emu.random: the --quick run under a random schedule)
#                 NAME.cli.*  (cli: bad sizes and kernels -> exit 2 and one line; no-device paths)
#                 NAME.ptx    (ptx: instructions present, no spill stores)
#                 NAME.ptx.smNN (ptx: no spill stores for the oldest architecture built, too)
#
# Every gpu case has an emu twin (NAME.emu.quick, NAME.emu.caseN, N as in NAME.gpu.caseN): the
# same program and arguments plus --iters 1 --warmup 0, with the emulator's libcudart.so.13 first
# on the library path and GPU100_REQUIRE_GPU=1 and GPU100_REQUIRE_EMULATOR=1, so it passes only by
# running emulated, and with every check of the emulator on (GPU100_EMU_CHECK=all, or what
# GPU100_EMU_CHECKS says: a race, an uninitialized read or a synchronization error fails it). It
# skips (77) only when no version of the day can run there (a day whose versions all call cuBLAS).
# The emulator interprets every thread on the CPU, far slower than a GPU: where a TEST_ARGS case
# would take it more than a few minutes, shrink it under the emulator with EMU_REPLACE "N=<args>"
# (the emu twin keeps the name caseN) or leave it out there with EMU_SKIP N, and add sizes to the
# emulated --quick run with EMU_QUICK (an explicit size wins over --quick's). A case that only the
# emulator needs goes in EMU_EXTRA: its tests are NAME.emu.caseN from N = (TEST_ARGS count) + 1.
# Keep at least one case at sizes that are no multiple of any tile or block (--quick is one): the
# edges are where kernels go wrong.

set(GPU100_CHECK_EXIT ${CMAKE_CURRENT_LIST_DIR}/check_exit.cmake)
set(GPU100_CHECK_PTX  ${CMAKE_CURRENT_LIST_DIR}/check_ptx.cmake)
set(GPU100_DAY_COUNT 0 CACHE INTERNAL "")
set(GPU100_EMU_SEED_BASE 0 CACHE STRING "added to each day's number to seed its NAME.emu.random run")
find_program(GPU100_GIT git)
find_program(GPU100_PTXAS ptxas HINTS ${CUDAToolkit_BIN_DIR} REQUIRED)

# A test that runs PROGRAM ARGS... and expects exit code EXPECT and stderr/stdout matching MATCH.
function(gpu100_expect_exit test_name label expect match)
  add_test(NAME ${test_name}
           COMMAND ${CMAKE_COMMAND} -DEXPECT=${expect} "-DMATCH=${match}"
                   -P ${GPU100_CHECK_EXIT} -- ${ARGN})
  set_tests_properties(${test_name} PROPERTIES LABELS ${label} TIMEOUT 60)
endfunction()

# The emulated cases of a day: sets OUT to their numbers and, in the caller, emu_args_N to the
# arguments of case N (TEST_ARGS case N, or its EMU_REPLACE; EMU_EXTRA after TEST_ARGS).
# Makes TESTS emulated runs (label emu): the emulator's libcudart.so.13 first on the library path,
# GPU100_REQUIRE_GPU=1 and GPU100_REQUIRE_EMULATOR=1 (so they pass only by running emulated), and
# the ENVIRONMENT given after those. REQUIRED_FILES: without the emulator's library the run would
# reach the real runtime (a GPU, or no device); ctest then reports the test as not run instead.
function(gpu100_emulated)
  cmake_parse_arguments(PARSE_ARGV 0 E "" "TIMEOUT" "TESTS;ENVIRONMENT")
  set(environment GPU100_REQUIRE_GPU=1 GPU100_REQUIRE_EMULATOR=1 ${E_ENVIRONMENT})
  set_tests_properties(${E_TESTS} PROPERTIES
    LABELS emu TIMEOUT ${E_TIMEOUT} ENVIRONMENT "${environment}"
    ENVIRONMENT_MODIFICATION "LD_LIBRARY_PATH=path_list_prepend:${GPU100_EMU_LIB_DIR}"
    REQUIRED_FILES "${GPU100_EMU_LIB_DIR}/libcudart.so.13")
endfunction()

function(gpu100_emu_cases out name test_args replace skip extra)
  list(LENGTH test_args test_count)
  foreach(case IN LISTS skip)
    if(NOT case MATCHES "^[0-9]+$" OR case LESS 1 OR case GREATER test_count)
      message(FATAL_ERROR "gpu100_day(${name}): EMU_SKIP ${case}: no TEST_ARGS case ${case}")
    endif()
  endforeach()
  foreach(entry IN LISTS replace)
    if(NOT entry MATCHES "^([0-9]+)=(.+)$")
      message(FATAL_ERROR "gpu100_day(${name}): EMU_REPLACE \"${entry}\": not \"N=<args>\"")
    endif()
    set(case ${CMAKE_MATCH_1})
    set(args "${CMAKE_MATCH_2}")
    if(case LESS 1 OR case GREATER test_count)
      message(FATAL_ERROR "gpu100_day(${name}): EMU_REPLACE \"${entry}\": no TEST_ARGS case ${case}")
    endif()
    math(EXPR index "${case} - 1")
    list(GET test_args ${index} original)
    if(DEFINED replacement_${case} OR case IN_LIST skip OR args STREQUAL original)
      message(FATAL_ERROR "gpu100_day(${name}): EMU_REPLACE \"${entry}\": case ${case} is "
                          "replaced twice, skipped, or replaced by its own arguments")
    endif()
    set(replacement_${case} "${args}")
  endforeach()
  foreach(args IN LISTS extra)
    if(args IN_LIST test_args)
      message(FATAL_ERROR "gpu100_day(${name}): EMU_EXTRA \"${args}\" is a TEST_ARGS case already")
    endif()
  endforeach()

  set(cases)
  set(case 0)
  foreach(args IN LISTS test_args extra)
    math(EXPR case "${case} + 1")
    if(case IN_LIST skip)
      continue()
    endif()
    if(DEFINED replacement_${case})
      set(args "${replacement_${case}}")
    endif()
    list(APPEND cases ${case})
    set(emu_args_${case} "${args}" PARENT_SCOPE)
  endforeach()
  set(${out} ${cases} PARENT_SCOPE)
endfunction()

# TARGET: SOURCE compiled to PTX alone (an object library) for virtual architecture ARCH, with
# the day's compile definitions (ARGN); building the day builds it.
function(gpu100_ptx_objects target day source arch rdc)
  add_library(${target} OBJECT ${source})
  target_link_libraries(${target} PRIVATE gpu100::common)
  target_compile_definitions(${target} PRIVATE ${ARGN})
  set_target_properties(${target} PROPERTIES CUDA_PTX_COMPILATION ON
                                             CUDA_ARCHITECTURES ${arch}-virtual)
  if(rdc)
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
  endif()
  add_dependencies(${day} ${target})
endfunction()

function(gpu100_day name source)
  cmake_parse_arguments(PARSE_ARGV 2 D "RDC" "PTX_ARCH;ALLOW_SPILLS"
                        "LIBS;ARCHS;PTX;SIZES;TEST_ARGS;EMU_REPLACE;EMU_SKIP;EMU_EXTRA;EMU_QUICK;EMU_H100")
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
  set(definitions GPU100_DAY="${name}" GPU100_TOPIC="${topic}" GPU100_SOURCE_HASH="${hash}")
  target_compile_definitions(${name} PRIVATE ${definitions})
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
    gpu100_emu_cases(emu_cases "${name}" "${D_TEST_ARGS}" "${D_EMU_REPLACE}" "${D_EMU_SKIP}"
                     "${D_EMU_EXTRA}")
    # One timed run: its time is the emulator's CPU time, meaningless as GPU speed anyway. A case
    # that sets --iters or --warmup itself keeps its own (the CLI refuses an option twice).
    separate_arguments(emu_quick UNIX_COMMAND "${D_EMU_QUICK}")
    add_test(NAME ${name}.emu.quick COMMAND ${name} --quick --iters 1 --warmup 0 ${emu_quick})
    foreach(case IN LISTS emu_cases)
      separate_arguments(arg_list UNIX_COMMAND "${emu_args_${case}}")
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
    # Approximate instructions (ex2/rcp/tanh... .approx, div.approx/full) return results at the
    # edge of the ISA's error bound, on a side chosen per operand from a seed (the day's number
    # plus GPU100_EMU_SEED_BASE): a tolerance that only exact math meets fails here, as it may on
    # a GPU. The random-schedule run below takes its schedule's seed for them.
    string(REGEX MATCH "[0-9]+" approx_seed "${name}")
    if(approx_seed MATCHES "^[0-9]+$")
      math(EXPR approx_seed "${approx_seed} + ${GPU100_EMU_SEED_BASE}")
    endif()
    gpu100_emulated(TESTS ${emu_tests} TIMEOUT 600 ENVIRONMENT GPU100_EMU_CHECK=${GPU100_EMU_CHECKS}
                    GPU100_EMU_APPROX=bound-random GPU100_EMU_SEED=${approx_seed})
    set_tests_properties(${emu_tests} PROPERTIES SKIP_RETURN_CODE 77)
    # The emulated --quick run once more under a random schedule (blocks start shuffled, warps
    # interleave at random, divergent groups need not reconverge), seeded by the day number plus
    # GPU100_EMU_SEED_BASE, which CI may move to rotate the seeds.
    string(REGEX REPLACE "^day0*([0-9]+).*$" "\\1" day_number "${name}")
    if(day_number MATCHES "^[0-9]+$")
      math(EXPR seed "${day_number} + ${GPU100_EMU_SEED_BASE}")
      add_test(NAME ${name}.emu.random COMMAND ${name} --quick --iters 1 --warmup 0 ${emu_quick})
      gpu100_emulated(TESTS ${name}.emu.random TIMEOUT 600
                      ENVIRONMENT GPU100_EMU_CHECK=${GPU100_EMU_CHECKS} GPU100_EMU_SCHEDULE=random:${seed}
                                  GPU100_EMU_APPROX=bound-random)
      set_tests_properties(${name}.emu.random PROPERTIES SKIP_RETURN_CODE 77)
    endif()
    if(D_EMU_H100)  # the H100's shape: 132 SMs instead of the emulated device's 8
      separate_arguments(arg_list UNIX_COMMAND "${D_EMU_H100}")
      if(NOT "--iters" IN_LIST arg_list)
        list(APPEND arg_list --iters 1)
      endif()
      if(NOT "--warmup" IN_LIST arg_list)
        list(APPEND arg_list --warmup 0)
      endif()
      add_test(NAME ${name}.emu.sms132 COMMAND ${name} ${arg_list})
      gpu100_emulated(TESTS ${name}.emu.sms132 TIMEOUT 600
                      ENVIRONMENT GPU100_EMU_CHECK=${GPU100_EMU_CHECKS} GPU100_EMU_SMS=132)
      # Every resident block holds its PTX registers (8 bytes a lane each): a grid filling 132 SMs
      # can take a few GB, so these cases run one at a time.
      set_tests_properties(${name}.emu.sms132 PROPERTIES SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu100_emu_sms132)
    endif()
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
  gpu100_ptx_objects(${name}_ptx ${name} ${source} ${ptx_arch} "${D_RDC}" ${definitions})
  set(ptxas_flags "")
  if(D_RDC)
    set(ptxas_flags -c)  # relocatable: the device runtime's functions are resolved at link time
  endif()
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
        gpu100_ptx_objects(${name}_ptx${low_arch} ${name} ${source} ${low_arch} "${D_RDC}"
                           ${definitions})
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
