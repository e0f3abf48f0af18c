# Planted-bug tests (see CMakeLists.txt for gpu100_emu_fault). Each program commits one bug and
# exits 1 when the runtime returned the hardware's error for it; most also take --fixed, the
# same kernel with the bug corrected, which must exit 0 with a clean stderr.
#
# The regexes name the exact source line of the planted bug. Rather than hard-code numbers that
# drift whenever a file is edited, the line is found from the marker comment "PLANTED" (written
# exactly once in each program with a kernel fault, on the faulting line).

set(fault_dir ${CMAKE_CURRENT_SOURCE_DIR})

# fault_variant(NAME SOURCE DEFINE...): program NAME is SOURCE.cu built with the DEFINEs and
# FAULT_NAME="NAME" (one planted bug in two settings, each its own test).
macro(fault_variant name source)
  set(fault_source_${name} ${source})
  set(fault_defines_${name} ${ARGN})
endmacro()

# The line number of the PLANTED marker in NAME.cu (or of another MARKER: PARTNER marks the
# earlier access of a race; without one, it is the PLANTED line).
function(fault_marker_line out name)
  set(marker PLANTED)
  if(ARGC GREATER 2)
    set(marker ${ARGV2})
  endif()
  set(src ${fault_dir}/${name}.cu)
  if(DEFINED fault_source_${name})
    set(src ${fault_dir}/${fault_source_${name}}.cu)
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(READ ${src} text)
  string(FIND "${text}" "${marker}" pos)
  if(pos LESS 0 AND marker STREQUAL "PARTNER")
    string(FIND "${text}" "PLANTED" pos)
  endif()
  if(pos LESS 0)
    message(FATAL_ERROR "${name}.cu has no ${marker} marker")
  endif()
  string(SUBSTRING "${text}" 0 ${pos} before)
  string(REGEX REPLACE "[^\n]" "" newlines "${before}")
  string(LENGTH "${newlines}" n)
  math(EXPR line "${n} + 1")
  set(${out} ${line} PARENT_SCOPE)
endfunction()

# The control: `fault_NAME --fixed` must exit 0 and print only its own "ok" line (the ^ anchor:
# no emulator message may come before it).
function(fault_fixed name)
  add_test(NAME emu.fault.${name}.fixed
           COMMAND ${CMAKE_COMMAND} -DEXPECT=0 "-DMATCH=^${name} --fixed: ok\n" -P ${GPU100_CHECK_EXIT}
                   -- $<TARGET_FILE:fault_${name}> --fixed)
  set_tests_properties(emu.fault.${name}.fixed PROPERTIES LABELS emu TIMEOUT 120
                       ENVIRONMENT "LD_LIBRARY_PATH=${GPU100_EMU_LIB_DIR};GPU100_EMU_CHECK=all")
endfunction()

# A fault inside a kernel. The emulator's explanation must come first and be complete:
#   gpu100 emulator: kernel <KERNEL, mangled>, block (BLOCK) thread (THREAD), '<INST...>' at
#   NAME.cu:<PLANTED line>: <WHAT>
# followed by the program's own line naming the ERROR the runtime returned (or, with REPORT,
# by lines matching REPORT). The location must name the program's line; it may say more (an
# inlined header frame before it), but a header line alone does not pass.
#   fault_kernel(NAME KERNEL k BLOCK "x,y,z" THREAD "x,y,z" INST regex WHAT regex
#                ERROR name [REPORT regex] [FIXED])
function(fault_kernel name)
  cmake_parse_arguments(PARSE_ARGV 1 F "FIXED" "KERNEL;BLOCK;THREAD;INST;WHAT;ERROR;REPORT" "")
  fault_marker_line(line ${name})
  if(F_WHAT MATCHES "@PARTNER@")
    fault_marker_line(partner ${name} PARTNER)
    string(REPLACE "@PARTNER@" "${partner}" F_WHAT "${F_WHAT}")
  endif()
  set(re "^gpu100 emulator: kernel _Z[0-9]+${F_KERNEL}[A-Za-z0-9_]*, ")
  string(APPEND re "block \\(${F_BLOCK}\\) thread \\(${F_THREAD}\\), ")
  set(file ${name})
  if(DEFINED fault_source_${name})
    set(file ${fault_source_${name}})
  endif()
  string(APPEND re "'${F_INST}[^']*' at ([^\n]*[ (])?${file}\\.cu:${line}([^0-9][^\n]*)?: ${F_WHAT}")
  if(F_REPORT)
    string(APPEND re "[^\n]*\n${F_REPORT}")
  else()
    string(APPEND re "[^\n]*\n${name}: ${F_ERROR} \\(")
  endif()
  gpu100_emu_fault(${name} "${re}")
  if(F_FIXED)
    fault_fixed(${name})
  endif()
endfunction()

# A mistake the runtime refuses before any kernel runs: the program's line must be the first
# thing on stderr (no kernel explanation) and name ERROR.
function(fault_api name error)
  cmake_parse_arguments(PARSE_ARGV 2 F "FIXED" "" "")
  gpu100_emu_fault(${name} "^${name}: ${error} \\(")
  if(F_FIXED)
    fault_fixed(${name})
  endif()
endfunction()

# --- global memory ------------------------------------------------------------------------------
fault_kernel(oob_load KERNEL k_scale BLOCK "3,0,0" THREAD "232,0,0"
  INST "ld\\.global(\\.nc)?\\.f32 "
  WHAT "out-of-bounds global load of 4 bytes \\(0 bytes past the end of a cudaMalloc allocation of 4000 bytes at 0x[0-9a-f]+\\) at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)
fault_kernel(oob_store KERNEL k_shift_left BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.global\\.f32 "
  WHAT "out-of-bounds global store of 4 bytes \\(4 bytes before a cudaMalloc allocation of 3996 bytes at 0x[0-9a-f]+\\) at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)
fault_kernel(use_after_free KERNEL k_add_one BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.global(\\.nc)?\\.u32 "
  WHAT "out-of-bounds global load of 4 bytes \\(.*\\) at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)
fault_kernel(host_pointer KERNEL k_square BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.global(\\.nc)?\\.f32 "
  WHAT "out-of-bounds global load of 4 bytes \\(.*\\) at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)
# Host memory the device may use (mapped cudaHostAlloc, cudaHostRegister) is checked to its
# bytes like device memory, and stream-ordered frees un-map at once.
fault_kernel(mapped_host_oob KERNEL k_ramp BLOCK "7,0,0" THREAD "104,0,0"
  INST "st\\.global\\.[bsu]32 "
  WHAT "out-of-bounds global store of 4 bytes \\(0 bytes past the end of pinned host memory \\(cudaHostAlloc\\) of 4000 bytes at 0x[0-9a-f]+\\) at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)
fault_kernel(host_register_oob KERNEL k_double BLOCK "7,0,0" THREAD "104,0,0"
  INST "ld\\.global(\\.nc)?\\.f32 "
  WHAT "out-of-bounds global load of 4 bytes \\(0 bytes past the end of host memory registered with cudaHostRegister of 4000 bytes at 0x[0-9a-f]+\\) at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)
fault_kernel(free_async_use KERNEL k_plus_index BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.global(\\.nc)?\\.[bsu]32 "
  WHAT "out-of-bounds global load of 4 bytes \\(0 bytes into a cudaMallocAsync allocation of 2048 bytes at 0x[0-9a-f]+, which was freed\\) at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)
fault_kernel(host_register_readonly KERNEL k_square BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.global\\.[bsu]32 "
  WHAT "store to read-only host memory registered with cudaHostRegister at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)

# --- shared and local memory --------------------------------------------------------------------
fault_kernel(smem_static KERNEL k_pair_sum BLOCK "0,0,0" THREAD "127,0,0"
  INST "ld\\.shared\\.f32 "
  WHAT "shared memory access outside the block's 512 bytes at address 0x200"
  ERROR cudaErrorIllegalAddress FIXED)
fault_kernel(smem_dynamic KERNEL k_diff BLOCK "0,0,0" THREAD "127,0,0"
  INST "st\\.shared\\.f32 "
  WHAT "shared memory access outside the block's 512 bytes at address 0x200"
  ERROR cudaErrorIllegalAddress FIXED)
fault_kernel(local_oob KERNEL k_histogram BLOCK "0,0,0" THREAD "37,0,0"
  INST "ld\\.local\\.u32 "
  WHAT "local memory access outside the thread's 32 bytes at address 0x20"
  ERROR cudaErrorIllegalAddress FIXED)

# --- alignment ----------------------------------------------------------------------------------
fault_kernel(misaligned_float4 KERNEL k_copy4 BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.global(\\.nc)?\\.v4\\.[bfu]32 "
  WHAT "misaligned 16-byte load at address 0x[0-9a-f]*4"
  ERROR cudaErrorMisalignedAddress FIXED)
fault_kernel(misaligned_store8 KERNEL k_pack BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.global\\.u64 "
  WHAT "misaligned 8-byte store at address 0x[0-9a-f]*4"
  ERROR cudaErrorMisalignedAddress FIXED)

# --- barriers -----------------------------------------------------------------------------------
# A barrier without a thread count waits for the threads of the block that have not exited: a
# branch around it is a deadlock when the threads that skip it wait elsewhere, and undefined
# (.aligned) when they meet another bar.sync 0.
fault_kernel(syncthreads_branch KERNEL k_block_sum BLOCK "0,0,0" THREAD "0,0,0"
  INST "(bar|barrier)\\.sync 0"
  WHAT "barrier 0 of the whole block \\(no thread count, as __syncthreads\\) reached at different instructions: here and by block \\(0,0,0\\) thread \\(96,0,0\\) at '(bar|barrier)\\.sync 0;' at ([^\n]*[ (])?syncthreads_branch\\.cu:@PARTNER@[^0-9]"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(syncthreads_live_warp KERNEL k_produce_consume BLOCK "0,0,0" THREAD "0,0,0"
  INST "(bar|barrier)\\.sync 0"
  WHAT "deadlock: barrier 0 waits for 128 threads but only 64 can arrive \\(0 threads of the block have exited\\): not every thread reaches the barrier"
  ERROR cudaErrorLaunchFailure FIXED)
fault_kernel(bar_count KERNEL k_reverse BLOCK "0,0,0" THREAD "64,0,0"
  INST "bar\\.sync 1, 64"
  WHAT "barrier 1 reached with thread count 64 while 96 expected"
  ERROR cudaErrorIllegalInstruction FIXED)
# A named barrier's count takes in threads that returned: a barrier with a count waits for its
# count whoever exits (only one without a count waits for just the threads that have not exited).
fault_kernel(bar_count_exit KERNEL k_mirror_half BLOCK "0,0,0" THREAD "0,0,0"
  INST "bar\\.sync 1, "
  WHAT "deadlock: barrier 1 waits for 128 threads but only 64 can arrive \\(64 threads of the block have exited\\): not every thread reaches the barrier"
  ERROR cudaErrorLaunchFailure FIXED)

# --- warp collectives ---------------------------------------------------------------------------
# These kernels call the intrinsics (__shfl_*_sync, __syncwarp, __reduce_add_sync), whose PTX the
# compiler inlines from CUDA's headers: the .loc of the collective names the header line, with
# the program's call site in its inlined_at. The explanation must name that call site.
fault_kernel(shfl_mask_excludes KERNEL k_half_sums BLOCK "0,0,0" THREAD "16,0,0"
  INST "shfl\\.sync\\.bfly\\.b32 "
  WHAT "a thread executes a collective whose member mask does not include it"
  ERROR cudaErrorIllegalInstruction FIXED)
# The report names a lane left waiting (lanes 0-15 of warp 1) when lane 16 exits.
fault_kernel(shfl_exited KERNEL k_warp_sums BLOCK "0,0,0" THREAD "(3[2-9]|4[0-7]),0,0"
  INST "shfl\\.sync\\.bfly\\.b32 "
  WHAT "shfl\\.sync reads lane 16, which has exited"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(shfl_src_outside KERNEL k_lower_half_sums BLOCK "0,0,0" THREAD "8,0,0"
  INST "shfl\\.sync\\.down\\.b32 "
  WHAT "shfl\\.sync reads lane 16, which is not in the member mask"
  ERROR cudaErrorIllegalInstruction FIXED)

# --- aborts -------------------------------------------------------------------------------------
fault_kernel(device_assert KERNEL k_checked_sqrt BLOCK "0,0,0" THREAD "77,0,0"
  INST ""
  WHAT "device-side assertion failed"
  ERROR cudaErrorAssert FIXED)
fault_kernel(trap KERNEL k_divide BLOCK "0,0,0" THREAD "40,0,0"
  INST "trap"
  WHAT "trap"
  ERROR cudaErrorIllegalInstruction FIXED)

# --- read-only memory ---------------------------------------------------------------------------
fault_kernel(const_write KERNEL k_decay BLOCK "0,0,0" THREAD "0,0,0"
  INST "st(\\.global)?\\.f32 "
  WHAT "store to read-only __constant__ c_coef at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)

# --- launches the runtime refuses ---------------------------------------------------------------
fault_api(coop_too_large cudaErrorCooperativeLaunchTooLarge FIXED)
fault_api(too_many_threads cudaErrorInvalidConfiguration FIXED)
# A block whose registers (from the program's SASS) do not fit in the 65536 a block may have.
fault_api(regs_out_of_resources cudaErrorLaunchOutOfResources FIXED)
fault_api(dyn_smem_optin cudaErrorInvalidValue FIXED)

# --- sticky errors ------------------------------------------------------------------------------
# After the fault every call returns it, in this order (the program prints one line per call).
set(sticky_report "")
foreach(call IN ITEMS "the launch" cudaMemcpy cudaMalloc "a correct launch" cudaGetLastError
                      cudaDeviceSynchronize)
  string(APPEND sticky_report "sticky: ${call} returned cudaErrorIllegalAddress\n")
endforeach()
string(APPEND sticky_report "sticky: cudaErrorIllegalAddress from every call\n")
fault_kernel(sticky KERNEL k_negate BLOCK "0,0,0" THREAD "64,0,0"
  INST "ld\\.global(\\.nc)?\\.u32 "
  WHAT "out-of-bounds global load of 4 bytes \\(0 bytes past the end of a cudaMalloc allocation of 256 bytes"
  REPORT "${sticky_report}" FIXED)

# --- more barrier misuse ------------------------------------------------------------------------
fault_kernel(bar_id_range KERNEL k_group_mirror BLOCK "0,0,0" THREAD "960,0,0"
  INST "bar\\.sync "
  WHAT "barrier id 16 out of range"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(bar_id_split KERNEL k_group_mirror BLOCK "0,0,0" THREAD "48,0,0"
  INST "bar\\.sync "
  WHAT "threads of one warp name different barriers"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(bar_count_partial KERNEL k_produce_consume BLOCK "0,0,0" THREAD "32,0,0"
  INST "bar\\.sync 1, "
  WHAT "barrier 1: more threads arrived \\(64\\) than its count 48"
  ERROR cudaErrorIllegalInstruction FIXED)
# Two different bar.sync 0 instructions (.aligned) reached by the two halves of every warp: the
# arrivals add up to the block's count, so only a check of the instruction itself can tell.
fault_kernel(syncthreads_divergent KERNEL k_even_odd BLOCK "0,0,0" THREAD "[0-9]+,0,0"
  INST "bar\\.sync 0"
  WHAT "[^\n]*(differ|diverg)"
  ERROR cudaErrorIllegalInstruction FIXED)

# --- calls and address conversions --------------------------------------------------------------
# The walks from nodes 0, 2, 5 and 11 all run into the cycle; any of them may hit the limit first.
fault_kernel(recursion_depth KERNEL k_depths BLOCK "0,0,0" THREAD "(0|2|5|11),0,0"
  INST "call"
  WHAT "call depth beyond 1000"
  ERROR cudaErrorIllegalInstruction FIXED)
# __cvta_generic_to_shared is inlined from a CUDA header too (see the warp collectives).
fault_kernel(cvta_shared KERNEL k_rotate BLOCK "0,0,0" THREAD "0,0,0"
  INST "cvta\\.to\\.shared"
  WHAT "cvta\\.to\\.shared of an address outside that window"
  ERROR cudaErrorIllegalInstruction FIXED)

# --- runtime calls with bad arguments -----------------------------------------------------------
gpu100_emu_fault(double_free
  "^gpu100 emulator: cudaFree: pointer was not returned by cudaMalloc\ndouble_free: cudaErrorInvalidValue \\(")
fault_fixed(double_free)
gpu100_emu_fault(memcpy_overrun
  "^gpu100 emulator: cudaMemcpy: a device range is not inside one allocation \\(0 bytes into a cudaMalloc allocation of 4000 bytes at 0x[0-9a-f]+, access runs past its end\\)\nmemcpy_overrun: cudaErrorInvalidValue \\(")
fault_fixed(memcpy_overrun)
# A kernel the emulator cannot decode: its launch fails, and stickily, so that a program that
# checks only cudaDeviceSynchronize (or nothing) cannot take the results it never got for zeros.
gpu100_emu_fault(undecodable
  "^gpu100 emulator: kernel [^\n]*k_fill_with_multimem[^\n]*: cannot decode 'multimem\\.red[^']*' in [^\n]*: instruction not supported by the emulator\n(undecodable: [^\n]* returned cudaErrorInvalidPtx\n)+undecodable: cudaErrorInvalidPtx from every call\n")
fault_fixed(undecodable)

# --- the checks (GPU100_EMU_CHECK): racecheck, initcheck, synccheck, leaks ----------------------
# Races and uninitialized reads do not stop a kernel: the launch runs to its end, and then the
# emulator prints one line per pair of instructions (per instruction for a read), the first one
# found first, and fails the launch with cudaErrorLaunchFailure. The regex names that first line,
# the earlier access of a race by its own marker (@PARTNER@), and lets the other lines pass.
function(fault_check name)
  cmake_parse_arguments(PARSE_ARGV 1 F "" "KERNEL;BLOCK;THREAD;INST;WHAT" "")
  fault_kernel(${name} KERNEL ${F_KERNEL} BLOCK "${F_BLOCK}" THREAD "${F_THREAD}" INST "${F_INST}"
    WHAT "${F_WHAT} \\([0-9]+ times? in this launch\\)" ERROR cudaErrorLaunchFailure
    REPORT "(gpu100 emulator: [^\n]*\n)*gpu100 emulator: kernel [^\n]*: the checks found [^\n]*\n${name}: cudaErrorLaunchFailure \\(" FIXED)
endfunction()

set(unordered "with no barrier, __syncwarp or release/acquire ordering them")

# Warp-synchronous code without __syncwarp: lanes of one warp are not ordered by running together.
fault_check(race_warp_reduce KERNEL k_block_sums BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.volatile\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x40: this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(16,0,0\\), 'st\\.volatile\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_warp_reduce\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# Blocks of one launch are ordered by nothing but atomics and fences.
fault_check(race_global_blocks KERNEL k_total BLOCK "[1-9],0,0" THREAD "0,0,0"
  INST "ld\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 4 bytes at 0x[0-9a-f]+\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_global_blocks\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# The same across blocks a byte at a time: words written by neighbouring threads are kept per byte.
fault_check(race_global_bytes KERNEL k_write_read BLOCK "1,0,0" THREAD "0,0,0"
  INST "ld\\.global\\.[bsu]8 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 64 bytes at 0x[0-9a-f]+\\): this read of 1 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.global\\.[bsu]8 [^']*' at ([^\n]*[ (])?race_global_bytes\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
fault_check(race_global_bytes_write KERNEL k_read_write BLOCK "1,0,0" THREAD "0,0,0"
  INST "st\\.global\\.[bsu]8 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 64 bytes at 0x[0-9a-f]+\\): this write of 1 bytes and an earlier read by block \\(0,0,0\\) thread \\(0,0,0\\), 'ld\\.global\\.[bsu]8 [^']*' at ([^\n]*[ (])?race_global_bytes_write\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# The same a word per thread, whole warps at consecutive addresses (settled a warp at a time).
fault_check(race_global_warps KERNEL k_write_read BLOCK "1,0,0" THREAD "0,0,0"
  INST "ld\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 256 bytes at 0x[0-9a-f]+\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_global_warps\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
fault_check(race_global_vector KERNEL k_write_read BLOCK "1,0,0" THREAD "0,0,0"
  INST "ld\\.global\\.v4\\.f32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 1024 bytes at 0x[0-9a-f]+\\): this read of 16 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.global\\.[bfu]32 [^']*' at ([^\n]*[ (])?race_global_vector\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# A whole-warp write after two unordered whole-warp reads of the words (both readers kept).
fault_check(race_global_after_reads KERNEL k_reads_write BLOCK "2,0,0" THREAD "0,0,0"
  INST "st\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 256 bytes at 0x[0-9a-f]+\\): this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(0,0,0\\), 'ld\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_global_after_reads\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# The same kept as rows of records while whole warps read a run of words (three warps' reads, one
# warp's again after a barrier): a later write of one word is checked against its readers.
fault_check(race_global_rows_read KERNEL k_reads_write BLOCK "1,0,0" THREAD "0,0,0"
  INST "st\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(84 bytes into a cudaMalloc allocation of 128 bytes at 0x[0-9a-f]+\\): this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\((21|53|85),0,0\\), 'ld\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_global_rows_read\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# A run written by one warp and read back by two (and written again), ordered by the block's
# barriers: a read of one word by another block is checked against its last writer.
foreach(variant IN ITEMS "once;1;21" "twice;2;85")
  list(GET variant 0 times)
  list(GET variant 1 writes)
  list(GET variant 2 writer)
  fault_variant(race_global_rows_write_${times} race_global_rows_write WRITES=${writes})
  fault_check(race_global_rows_write_${times} KERNEL k_rows_read BLOCK "1,0,0" THREAD "0,0,0"
    INST "ld\\.global\\.[bsu]32 "
    WHAT "race on global memory at address 0x[0-9a-f]+ \\(84 bytes into a cudaMalloc allocation of 128 bytes at 0x[0-9a-f]+\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(${writer},0,0\\), 'st\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_global_rows_write\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
endforeach()
# A run read by whole warps, a lane of the last past its release: its read keeps its own clock,
# whether the run was read by one warp before (two readers a word) or by two (a full cell's worth).
foreach(variant IN ITEMS "beside;1" "full;2")
  list(GET variant 0 kind)
  list(GET variant 1 earlier)
  fault_variant(race_global_rows_clock_${kind} race_global_rows_clock EARLIER_WARPS=${earlier})
  fault_check(race_global_rows_clock_${kind} KERNEL k_signal_write BLOCK "1,0,0" THREAD "0,0,0"
    INST "st\\.global\\.[bsu]32 "
    WHAT "race on global memory at address 0x[0-9a-f]+ \\(20 bytes into a cudaMalloc allocation of 128 bytes at 0x[0-9a-f]+\\): this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(69,0,0\\), 'ld\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_global_rows_clock\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
endforeach()
# A run read by a whole warp after one thread wrote a word of it, the run's row read before the
# write or untouched: the read is checked against the word's own record.
foreach(variant IN ITEMS "rows;1" "fresh;0")
  list(GET variant 0 kind)
  list(GET variant 1 read_first)
  fault_variant(race_global_rows_after_lane_${kind} race_global_rows_after_lane READ_FIRST=${read_first})
  fault_check(race_global_rows_after_lane_${kind} KERNEL k_write_read BLOCK "1,0,0" THREAD "3,0,0"
    INST "ld\\.global\\.[bsu]32 "
    WHAT "race on global memory at address 0x[0-9a-f]+ \\(12 bytes into a cudaMalloc allocation of 128 bytes at 0x[0-9a-f]+\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(3,0,0\\), 'st\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_global_rows_after_lane\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
endforeach()
# A word written after the writer's release: each lane's clock kept, lane 5's past the release.
fault_check(race_publish_early KERNEL k_publish BLOCK "1,0,0" THREAD "0,0,0"
  INST "ld\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(20 bytes into a cudaMalloc allocation of 128 bytes at 0x[0-9a-f]+\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(5,0,0\\), 'st\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_publish_early\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}: this thread acquired a release by that block, but one that began before the write was ordered into it \\([^\n]*\\)")
# A store published by an atomic without the fence between them.
fault_check(race_missing_fence KERNEL k_sum BLOCK "[1-9],0,0" THREAD "0,0,0"
  INST "ld\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 24 bytes at 0x[0-9a-f]+\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_missing_fence\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# ld.global.nc (__ldg, const __restrict__) of bytes another thread of the launch writes, in
# either order, ordered by a barrier or not; --fixed writes one buffer and .nc-reads another.
set(nc_rule "memory read through the non-coherent path \\(ld\\.global\\.nc: __ldg, or a const __restrict__ pointer\\) must stay unchanged while the kernel runs")
fault_check(nc_written KERNEL k_smooth BLOCK "0,0,0" THREAD "96,0,0"
  INST "st\\.global\\.f32 "
  WHAT "this write of 4 bytes at address 0x[0-9a-f]+ \\(384 bytes into a cudaMalloc allocation of 2048 bytes at 0x[0-9a-f]+\\) changes memory that a non-coherent load by block \\(0,0,0\\) thread \\(95,0,0\\), 'ld\\.global\\.nc\\.f32 [^']*' at ([^\n]*[ (])?nc_written\\.cu:@PARTNER@([^0-9,][^,]*)?, read earlier in this launch: ${nc_rule}[^\n]*")
fault_check(nc_after_write KERNEL k_scale BLOCK "0,0,0" THREAD "32,0,0"
  INST "ld\\.global\\.nc\\.f32 "
  WHAT "non-coherent load of 4 bytes at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 12 bytes at 0x[0-9a-f]+\\) that a write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.global\\.f32 [^']*' at ([^\n]*[ (])?nc_after_write\\.cu:@PARTNER@([^0-9,][^,]*)?, changed earlier in this launch: ${nc_rule}[^\n]*")
fault_check(nc_after_write_bytes KERNEL k_neighbour BLOCK "0,0,0" THREAD "32,0,0"
  INST "ld\\.global\\.nc\\.[bsu]8 "
  WHAT "non-coherent load of 1 bytes at address 0x[0-9a-f]+ \\(33 bytes into a cudaMalloc allocation of 128 bytes at 0x[0-9a-f]+\\) that a write by block \\(0,0,0\\) thread \\(33,0,0\\), 'st\\.global\\.[bsu]8 [^']*' at ([^\n]*[ (])?nc_after_write_bytes\\.cu:@PARTNER@([^0-9,][^,]*)?, changed earlier in this launch: ${nc_rule}[^\n]*")
# Two threads' .nc loads of a word are both kept: the writer's own is not reported, the other is.
fault_check(nc_second_reader KERNEL k_take BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.global\\.[bsu]32 "
  WHAT "this write of 4 bytes at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 4 bytes at 0x[0-9a-f]+\\) changes memory that a non-coherent load by block \\(0,0,0\\) thread \\(1,0,0\\), 'ld\\.global\\.nc\\.[bsu]32 [^']*' at ([^\n]*[ (])?nc_second_reader\\.cu:@PARTNER@([^0-9,][^,]*)?, read earlier in this launch: ${nc_rule}[^\n]*")
# The same when the loads are whole warps on consecutive words, first recorded a piece at a time.
fault_check(nc_rows KERNEL k_weigh BLOCK "0,0,0" THREAD "32,0,0"
  INST "st\\.global\\.f32 "
  WHAT "this write of 4 bytes at address 0x[0-9a-f]+ \\(128 bytes into a cudaMalloc allocation of 256 bytes at 0x[0-9a-f]+\\) changes memory that a non-coherent load by block \\(0,0,0\\) thread \\(64,0,0\\), 'ld\\.global\\.nc\\.f32 [^']*' at ([^\n]*[ (])?nc_rows\\.cu:@PARTNER@([^0-9,][^,]*)?, read earlier in this launch: ${nc_rule}[^\n]*")
# An uninitialized shared read is reported where its value is used (stored, an address, a branch),
# naming the use; one whose value is discarded (selected away, as CUB's merge does) is not.
fault_check(init_shared KERNEL k_diff BLOCK "0,0,0" THREAD "127,0,0"
  INST "ld\\.shared\\.f32 "
  WHAT "uninitialized shared memory read of 4 bytes at address 0x200: 4 of them written by no thread of the block before; the value is used by 'st\\.global\\.f32 [^']*' at ([^\n]*[ (])?init_shared\\.cu:@PARTNER@([^0-9][^\n]*)?")
fault_check(init_shared_discarded KERNEL k_diff_in_tile BLOCK "0,0,0" THREAD "127,0,0"
  INST "ld\\.shared\\.f32 "
  WHAT "uninitialized shared memory read of 4 bytes at address 0x200: 4 of them written by no thread of the block before; the value is used by 'st\\.global\\.f32 [^']*' at ([^\n]*[ (])?init_shared_discarded\\.cu:@PARTNER@([^0-9][^\n]*)?")
fault_check(init_global KERNEL k_accumulate BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.global\\.f32 "
  WHAT "uninitialized global memory read of 4 bytes at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 4000 bytes at 0x[0-9a-f]+\\): 4 of them not written since the allocation \\(by a copy, a memset or a kernel\\)")
fault_check(init_partial KERNEL k_sum_words BLOCK "0,0,0" THREAD "15,0,0"
  INST "ld\\.global(\\.nc)?\\.[bsu]32 "
  WHAT "uninitialized global memory read of 4 bytes at address 0x[0-9a-f]+ \\(60 bytes into a cudaMalloc allocation of 64 bytes at 0x[0-9a-f]+\\): 1 of them not written since the allocation \\(by a copy, a memset or a kernel\\)")
# synccheck: stopped where it happens, like the barrier errors above.
fault_kernel(sync_mask_disagree KERNEL k_half_max BLOCK "0,0,0" THREAD "16,0,0"
  INST "shfl\\.sync\\.bfly\\.b32 "
  WHAT "the member masks of one collective disagree: this thread gives 0xffffffff while thread \\(0,0,0\\), which one of the two masks names, gives 0x0000ffff"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(sync_syncthreads_warps KERNEL k_mirror BLOCK "0,0,0" THREAD "32,0,0"
  INST "(bar|barrier)\\.sync 0"
  WHAT "barrier 0 of the whole block \\(no thread count, as __syncthreads\\) reached at different instructions: here and by block \\(0,0,0\\) thread \\(0,0,0\\) at '(bar|barrier)\\.sync 0;' at ([^\n]*[ (])?sync_syncthreads_warps\\.cu:@PARTNER@[^0-9]"
  ERROR cudaErrorIllegalInstruction FIXED)
# leaks: reported at exit; a failure (exit status 1) only with leaks-fail.
set(leak_report "^leak: two buffers left allocated\ngpu100 emulator: leak: 2 device allocations \\(5096 bytes\\) not freed at exit:\ngpu100 emulator:   4096 bytes at 0x[0-9a-f]+ \\(device allocation number 1\\)\ngpu100 emulator:   1000 bytes at 0x[0-9a-f]+ \\(device allocation number 2\\)\n$")
gpu100_emu_fault(leak "${leak_report}")
set_tests_properties(emu.fault.leak PROPERTIES ENVIRONMENT "LD_LIBRARY_PATH=${GPU100_EMU_LIB_DIR};GPU100_EMU_CHECK=all,leaks-fail")
add_test(NAME emu.fault.leak.report
         COMMAND ${CMAKE_COMMAND} -DEXPECT=0 "-DMATCH=${leak_report}" -P ${GPU100_CHECK_EXIT} -- $<TARGET_FILE:fault_leak>)
set_tests_properties(emu.fault.leak.report PROPERTIES LABELS emu TIMEOUT 120
                     ENVIRONMENT "LD_LIBRARY_PATH=${GPU100_EMU_LIB_DIR};GPU100_EMU_CHECK=all")
add_test(NAME emu.fault.leak.fixed
         COMMAND ${CMAKE_COMMAND} -DEXPECT=0 "-DMATCH=^leak --fixed: ok\n$" -P ${GPU100_CHECK_EXIT} -- $<TARGET_FILE:fault_leak> --fixed)
set_tests_properties(emu.fault.leak.fixed PROPERTIES LABELS emu TIMEOUT 120
                     ENVIRONMENT "LD_LIBRARY_PATH=${GPU100_EMU_LIB_DIR};GPU100_EMU_CHECK=all,leaks-fail")

# The block and thread each regex names are the first to fault under the emulator's default,
# in-order schedule; a seeded random schedule (GPU100_EMU_SCHEDULE=random:N) can let another
# faulting warp go first. So these tests always run in order, whatever the caller's environment.
get_property(fault_tests DIRECTORY PROPERTY TESTS)
set_property(TEST ${fault_tests} APPEND PROPERTY
             ENVIRONMENT_MODIFICATION "GPU100_EMU_SCHEDULE=unset:")

# --- dynamic parallelism --------------------------------------------------------------------------
# A child grid's fault fails its parent's launch; the emulator names the child (block 1 of the
# last child: i = 40 is thread 8 of block 1).
fault_kernel(child_oob KERNEL k_child BLOCK "1,0,0" THREAD "8,0,0"
  INST "st\\.global\\.u32 "
  WHAT "out-of-bounds global store of 4 bytes \\(0 bytes past the end of a cudaMalloc allocation of 480 bytes at 0x[0-9a-f]+\\) at address 0x[0-9a-f]+"
  ERROR cudaErrorIllegalAddress FIXED)
find_library(GPU100_CUDADEVRT cudadevrt HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
set_target_properties(fault_child_oob PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
target_link_libraries(fault_child_oob PRIVATE ${GPU100_CUDADEVRT})

# --- races the checks must tell from the defined patterns beside them ----------------------------
# Each --fixed run is a pattern CUDA defines or documents, which the checks must not report; the
# planted bug beside it is the nearest real race, which they must.
# Lanes of one warp storing to one address in one instruction: equal values are defined (the
# --fixed run), different values leave which one lands unspecified.
fault_check(race_store_lanes KERNEL k_flag_lane BLOCK "0,0,0" THREAD "7,0,0"
  INST "st\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 32 bytes at 0x[0-9a-f]+\\): this write of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(2,0,0\\), 'st\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_store_lanes\\.cu:@PARTNER@([^0-9,][^,]*)?, in the same execution of this store by one warp, storing a different value \\(which lane's value lands is unspecified; lanes storing equal values are not reported\\)")
# Different values stored by different warps are a race; equal ones (--fixed) are not.
fault_check(race_store_warps KERNEL k_any_negative BLOCK "0,0,0" THREAD "[0-9]+,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x0: this write of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\([0-9]+,0,0\\), 'st\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_store_warps\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# Whole-warp shared reads of words another warp wrote since the last barrier, and a whole-warp
# write of words two other warps read since it (the checks settle whole warps together).
fault_check(race_shared_warps KERNEL k_stage BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x0: this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(32,0,0\\), 'st\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_warps\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
fault_check(race_shared_after_reads KERNEL k_reuse BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x0: this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\((32|64),0,0\\), 'ld\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_after_reads\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# Whole-warp reads between two barriers of the block are logged and recorded only when something
# else touches shared memory: an atomic checked lane by lane, a read of a word split into bytes, a
# read made after the warp arrived at a named barrier (it keeps the clock it was made at).
fault_check(race_shared_atomic_after_reads KERNEL k_counts BLOCK "0,0,0" THREAD "0,0,0"
  INST "atom\\.shared\\.add\\.[su]32 "
  WHAT "race on shared memory at address 0x0: this atomic of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(32,0,0\\), 'ld\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_atomic_after_reads\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}: a plain read of memory that other threads update atomically may return a stale value, and no compare-and-swap of the reading thread on this address compared against the value read \\(a plain load that only seeds a CAS loop is not reported\\)")
fault_check(race_shared_split_reads KERNEL k_patch BLOCK "0,0,0" THREAD "32,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x0: this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(0,0,0\\), 'ld\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_split_reads\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
fault_check(race_shared_after_arrive KERNEL k_handoff BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x0: this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(32,0,0\\), 'ld\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_after_arrive\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# A warp's reads of runs of one word (settled a word at a time) keep the word's earlier reader.
fault_check(race_shared_runs KERNEL k_pairs BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x0: this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(20,0,0\\), 'ld\\.volatile\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_runs\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# The same with a run of one lane at the warp's end.
fault_check(race_shared_last_lane KERNEL k_count BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x4: this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(31,0,0\\), 'ld\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_last_lane\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# The same when the word's first read slot holds the last lane's earlier read.
fault_check(race_shared_last_reader KERNEL k_offsets BLOCK "0,0,0" THREAD "31,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x0: this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(30,0,0\\), 'ld\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_last_reader\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# A row of words read by both halves of a warp (settled a word at a time), with the word's first
# read slot already a lane's: the second half's (lane 20) or the first half's (lane 4).
foreach(variant IN ITEMS "second;20" "first;4")
  list(GET variant 0 half)
  list(GET variant 1 peeker)
  fault_variant(race_shared_row_${half} race_shared_row PEEKER=${peeker})
  fault_check(race_shared_row_${half} KERNEL k_row BLOCK "0,0,0" THREAD "20,0,0"
    INST "st\\.shared\\.[bsu]32 "
    WHAT "race on shared memory at address 0x10: this write of 4 bytes and an earlier read by block \\(0,0,0\\) thread \\(4,0,0\\), 'ld\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_row\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
endforeach()
# A whole warp's store of words (settled a warp at a time) racing with a lane of the same warp: two
# lanes storing one word, or a lane's earlier store of one byte of a word.
fault_variant(race_shared_warp_store_pairs race_shared_warp_store PAIRS=1)
fault_check(race_shared_warp_store_pairs KERNEL k_store BLOCK "0,0,0" THREAD "1,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0x0: this write of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_shared_warp_store\\.cu:[0-9]+([^0-9,][^,]*)?, in the same execution of this store by one warp, storing a different value \\(which lane's value lands is unspecified; lanes storing equal values are not reported\\)")
fault_variant(race_shared_warp_store_byte race_shared_warp_store PAIRS=0)
fault_check(race_shared_warp_store_byte KERNEL k_store BLOCK "0,0,0" THREAD "3,0,0"
  INST "st\\.shared\\.[bsu]32 "
  WHAT "race on shared memory at address 0xc: this write of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(31,0,0\\), 'st\\.shared\\.[bsu]8 [^']*' at ([^\n]*[ (])?race_shared_warp_store\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# Vector accesses (float4) racing in their last word only: every word is checked.
fault_check(race_shared_vector KERNEL k_groups BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.shared\\.v4\\.f32 "
  WHAT "race on shared memory at address 0x0: this read of 16 bytes and an earlier write by block \\(0,0,0\\) thread \\(32,0,0\\), 'st\\.shared\\.[bfu]32 [^']*' at ([^\n]*[ (])?race_shared_vector\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
fault_check(race_shared_vector_write KERNEL k_groups BLOCK "0,0,0" THREAD "0,0,0"
  INST "st\\.shared\\.v4\\.f32 "
  WHAT "race on shared memory at address 0x0: this write of 16 bytes and an earlier read by block \\(0,0,0\\) thread \\(32,0,0\\), 'ld\\.shared\\.[bfu]32 [^']*' at ([^\n]*[ (])?race_shared_vector_write\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
fault_check(race_shared_bytes KERNEL k_stage BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.shared\\.[bsu]8 "
  WHAT "race on shared memory at address 0x0: this read of 1 bytes and an earlier write by block \\(0,0,0\\) thread \\(32,0,0\\), 'st\\.shared\\.[bsu]8 [^']*' at ([^\n]*[ (])?race_shared_bytes\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}")
# A plain load seeding a compare-and-swap loop (CUDA's bf16 atomicAdd for sm_80, the Programming
# Guide's atomicMax) is not reported; a plain load of an atomic counter used as a result is.
fault_check(race_cas_seed KERNEL k_arrivals BLOCK "0,0,0" THREAD "0,0,0"
  INST "ld\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 4 bytes at 0x[0-9a-f]+\\): this read of 4 bytes and an earlier atomic by block \\(0,0,0\\) thread \\(31,0,0\\), 'atom\\.global\\.add\\.u32 [^']*' at ([^\n]*[ (])?race_cas_seed\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}: a plain read of memory that other threads update atomically may return a stale value, and no compare-and-swap of the reading thread on this address compared against the value read \\(a plain load that only seeds a CAS loop is not reported\\)")
set_target_properties(fault_race_cas_seed PROPERTIES CUDA_ARCHITECTURES 80)
# Writers that fence before the barrier after which another thread's atomic announces their
# writes: the release begins at that thread's fence, before the barrier ordered the writes.
fault_check(race_fence_early KERNEL k_sum BLOCK "4,0,0" THREAD "0,0,0"
  INST "ld\\.global\\.[bsu]32 "
  WHAT "race on global memory at address 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of 640 bytes at 0x[0-9a-f]+\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(1,0,0\\), 'st\\.global\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_fence_early\\.cu:@PARTNER@([^0-9,][^,]*)?, ${unordered}: this thread acquired a release by that block, but one that began before the write was ordered into it \\(a fence and a later strong write of one thread release what precedes the fence in that thread, or was ordered before it by a barrier: a writer's own fence before the barrier that precedes another thread's atomic releases nothing; fence in the thread that does the atomic, after the barrier\\)")
# --- textures -----------------------------------------------------------------------------------
fault_kernel(texture_destroyed KERNEL k_copy BLOCK "0,0,0" THREAD "0,0,0"
  INST "tex\\.1d\\.v4\\.f32\\.s32 "
  WHAT "texture object [0-9]+ was destroyed \\(cudaDestroyTextureObject\\) before this use"
  ERROR cudaErrorIllegalAddress FIXED)

# --- schedules (GPU100_EMU_SCHEDULE=random:SEED) ---------------------------------------------------
# Bugs that only another legal schedule shows: each must be reported under every listed seed, and
# its --fixed form must pass under them. The default, in-order schedule hides both.
function(fault_schedule name match)
  foreach(seed 1 2 3)
    add_test(NAME emu.fault.${name}.seed${seed}
             COMMAND ${CMAKE_COMMAND} -DEXPECT=1 "-DMATCH=${match}" -P ${GPU100_CHECK_EXIT} --
                     $<TARGET_FILE:fault_${name}>)
    add_test(NAME emu.fault.${name}.seed${seed}.fixed
             COMMAND ${CMAKE_COMMAND} -DEXPECT=0 "-DMATCH=^${name} --fixed: ok\n" -P ${GPU100_CHECK_EXIT} --
                     $<TARGET_FILE:fault_${name}> --fixed)
    set_tests_properties(emu.fault.${name}.seed${seed} emu.fault.${name}.seed${seed}.fixed PROPERTIES
                         LABELS emu TIMEOUT 120
                         ENVIRONMENT "LD_LIBRARY_PATH=${GPU100_EMU_LIB_DIR};GPU100_EMU_CHECK=all;GPU100_EMU_SCHEDULE=random:${seed}")
  endforeach()
endfunction()
# Blocks start in a shuffled order: a scan chained on blockIdx.x waits for blocks that never start.
gpu100_emu_fault(schedule_chain "^gpu100 emulator: kernel _Z7k_chain[^\n]*: no progress: [^\n]*schedule_chain\\.cu:[0-9]+[^\n]*\nschedule_chain: cudaErrorLaunchFailure \\(")
set_tests_properties(emu.fault.schedule_chain PROPERTIES ENVIRONMENT
                     "LD_LIBRARY_PATH=${GPU100_EMU_LIB_DIR};GPU100_EMU_CHECK=all;GPU100_EMU_SCHEDULE=random:1")
fault_schedule(schedule_chain "^gpu100 emulator: kernel _Z7k_chain[^\n]*: no progress: [^\n]*schedule_chain\\.cu:[0-9]+[^\n]*\nschedule_chain: cudaErrorLaunchFailure \\(")
# A divergent warp need not reconverge before __activemask().
gpu100_emu_fault(schedule_activemask "^schedule_activemask: warp [0-9]+ summed [0-9]+, expected [0-9]+: __activemask\\(\\) named only the lanes that reached it together\n")
set_tests_properties(emu.fault.schedule_activemask PROPERTIES ENVIRONMENT
                     "LD_LIBRARY_PATH=${GPU100_EMU_LIB_DIR};GPU100_EMU_CHECK=all;GPU100_EMU_SCHEDULE=random:1")
fault_schedule(schedule_activemask "^schedule_activemask: warp [0-9]+ summed [0-9]+, expected [0-9]+: __activemask\\(\\) named only the lanes that reached it together\n")

# --- asynchronous streams: work the program never ordered -----------------------------------------
# "gpu100 emulator: unordered stream work on the same memory: FIRST VERB N bytes at ADDR (WHERE),
# and SECOND VERB them; WHY", then the program's line naming the error.
set(stream_where "[0-9]+ bytes at 0x[0-9a-f]+ \\(0 bytes into a cudaMalloc allocation of [0-9]+ bytes at 0x[0-9a-f]+\\)")
set(stream_why "nothing orders the two \\(no event wait, stream or device synchronization, or legacy default stream ordering between them\\), so on a GPU they may run in either order or at once")
gpu100_emu_fault(stream_missing_wait "^gpu100 emulator: unordered stream work on the same memory: kernel producer\\(int\\*, int\\) \\(launch 1\\) in stream 1 \\(non-blocking\\) writes ${stream_where}, and kernel consumer\\(int const\\*, int\\*, int\\) \\(launch 2\\) in stream 2 \\(non-blocking\\) reads them; ${stream_why}\nstream_missing_wait: cudaErrorLaunchFailure \\(")
fault_fixed(stream_missing_wait)
gpu100_emu_fault(stream_missing_sync "^gpu100 emulator: unordered stream work on the same memory: kernel square\\(int\\*, int\\) \\(launch 1\\) in stream 1 \\(non-blocking\\) writes ${stream_where}, and a copy of 8192 bytes in the legacy default stream reads them; ${stream_why}\nstream_missing_sync: cudaErrorLaunchFailure \\(")
fault_fixed(stream_missing_sync)
gpu100_emu_fault(graph_missing_edge "^gpu100 emulator: unordered stream work on the same memory: kernel fill\\(int\\*, int\\) \\(launch 1\\) \\(graph node 1\\) writes ${stream_where}, and kernel twice\\(int const\\*, int\\*, int\\) \\(launch 2\\) \\(graph node 2\\) of the same graph launch reads them; no path of graph edges orders the two nodes, so on a GPU they may run in either order or at once\ngraph_missing_edge: cudaErrorLaunchFailure \\(")
fault_fixed(graph_missing_edge)
# Host code reading pinned memory that a queued copy writes (the page is guarded until it runs).
gpu100_emu_fault(stream_host_read "^gpu100 emulator: the host reads pinned host memory at 0x[0-9a-f]+ that a copy of 4096 bytes in stream 1 \\(non-blocking\\), queued and not yet run, writes: synchronize with its stream \\(or an event recorded after it\\) first, as on a GPU the work may run at any time before that\nstream_host_read: cudaErrorLaunchFailure \\(")
fault_fixed(stream_host_read)

# --- approximate instructions (GPU100_EMU_APPROX) ------------------------------------------------
# A -use_fast_math kernel (tanhf is tanh.approx.f32) checked with an fp32 tolerance: with results
# at the edge of the ISA's bound the program's own check fails; the tolerance derived from the
# bound (--fixed) holds.
gpu100_emu_fault(fast_math_tolerance
  "^fast_math_tolerance: [1-9][0-9]* of 4096 results outside the relative tolerance 1e-06 \\(worst: ")
target_compile_options(fault_fast_math_tolerance PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-use_fast_math>)
fault_fixed(fast_math_tolerance)
set_tests_properties(emu.fault.fast_math_tolerance emu.fault.fast_math_tolerance.fixed PROPERTIES
  ENVIRONMENT "LD_LIBRARY_PATH=${GPU100_EMU_LIB_DIR};GPU100_EMU_CHECK=all;GPU100_EMU_APPROX=bound-random;GPU100_EMU_SEED=1")

# --- mbarrier and bulk copies (sm_90) -------------------------------------------------------------
fault_kernel(mbar_arrive_extra KERNEL k_load_row BLOCK "0,0,0" THREAD "1,0,0"
  INST "mbarrier\\.arrive\\.expect_tx\\.shared::cta\\.b64 "
  WHAT "mbarrier arrive of 1 on an mbarrier at shared offset 0x[0-9a-f]+ \\(phase 0 mod 8, 0 of 1 arrivals pending, tx-count 2048\\): more arrivals than the phase expects"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(mbar_tx_negative KERNEL k_load_row BLOCK "0,0,0" THREAD "0,0,0"
  INST "cp\\.async\\.bulk\\.shared::cluster\\.global\\.mbarrier::complete_tx::bytes "
  WHAT "complete_tx of a bulk copy: every arrival of the phase is in but the tx-count is negative: the copies completed 512 bytes more than expect_tx announced \\(mbarrier at shared offset 0x[0-9a-f]+ \\(phase 0 mod 8, 0 of 1 arrivals pending, tx-count -512\\)\\)"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(mbar_deadlock KERNEL k_load_row BLOCK "0,0,0" THREAD "0,0,0"
  INST "mbarrier\\.try_wait\\.parity\\.shared::cta\\.b64 "
  WHAT "deadlock: mbarrier\\.try_wait waits for the phase of parity 0 of the mbarrier at shared offset 0x[0-9a-f]+ \\(phase 0 mod 8, 0 of 1 arrivals pending, tx-count 512\\), which nothing left can complete"
  ERROR cudaErrorLaunchFailure FIXED)
fault_kernel(mbar_token_old KERNEL k_rounds BLOCK "0,0,0" THREAD "[0-9]+,0,0"
  INST "mbarrier\\.try_wait\\.shared::cta\\.b64 "
  WHAT "mbarrier wait on a phase 2 phases old: the ISA allows only the current phase and the one before it"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(tma_smem_misaligned KERNEL k_tile BLOCK "0,0,0" THREAD "0,0,0"
  INST "cp\\.async\\.bulk\\.tensor\\.2d\\."
  WHAT "cp\\.async\\.bulk\\.tensor shared memory address not 128-byte aligned at address 0x[0-9a-f]*10"
  ERROR cudaErrorMisalignedAddress FIXED)
fault_kernel(tma_coord_misaligned KERNEL k_tile BLOCK "0,0,0" THREAD "0,0,0"
  INST "cp\\.async\\.bulk\\.tensor\\.2d\\."
  WHAT "cp\\.async\\.bulk\\.tensor coordinate 10 of dimension 0 starts the box 40 bytes into a row: not a multiple of 16 bytes at address 0x[0-9a-f]+"
  ERROR cudaErrorMisalignedAddress FIXED)
fault_kernel(tma_store_unfenced KERNEL k_squares BLOCK "0,0,0" THREAD "0,0,0"
  INST "cp\\.async\\.bulk\\.global\\.shared::cta\\.bulk_group "
  WHAT "shared memory at address 0x0 was written through the generic proxy by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.shared\\.[bsu]32 [^']*' at ([^\n]*[ (])?tma_store_unfenced\\.cu:[0-9]+, and is read by this bulk copy \\(the async proxy\\) with no fence\\.proxy\\.async between them"
  ERROR cudaErrorLaunchFailure FIXED)

# --- warpgroup MMA (sm_90a) ---------------------------------------------------------------------
fault_kernel(wgmma_early_read KERNEL k_product BLOCK "0,0,0" THREAD "(0|32|64|96),0,0"
  INST "st\\.global\\.v4\\.f32 "
  WHAT "register %f[0-9]+ is an accumulator of the wgmma\\.mma_async 'wgmma\\.mma_async\\.sync\\.aligned\\.m64n8k16[^']*' at wgmma_early_read\\.cu:[0-9]+, read or written before the wgmma\\.wait_group that covers it"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(wgmma_desc_oob KERNEL k_product BLOCK "0,0,0" THREAD "(0|32|64|96),0,0"
  INST "wgmma\\.mma_async\\."
  WHAT "wgmma\\.mma_async: the shared-memory descriptor of B \\(0x[0-9a-f]+: start 0x900, LBO 128, SBO 256, no swizzle, K-major\\) reaches byte 0x900 for element \\(0, 0\\), outside the block's 2304 bytes of shared memory at address 0x900"
  ERROR cudaErrorIllegalAddress FIXED)
set_target_properties(fault_wgmma_early_read fault_wgmma_desc_oob PROPERTIES CUDA_ARCHITECTURES 90a)
fault_kernel(setmaxnreg_mismatch KERNEL k_regs BLOCK "0,0,0" THREAD "(0|32|64|96),0,0"
  INST "setmaxnreg\\.inc\\.sync\\.aligned\\.u32 "
  WHAT "setmaxnreg: warp [0-3] of the same warpgroup executed 'setmaxnreg\\.inc\\.sync\\.aligned\\.u32 2[34][02];' at setmaxnreg_mismatch\\.cu:[0-9]+ there \\(every warp of a warpgroup must execute the same setmaxnreg\\)"
  ERROR cudaErrorIllegalInstruction FIXED)
set_target_properties(fault_setmaxnreg_mismatch PROPERTIES CUDA_ARCHITECTURES 90a)

# --- clusters -----------------------------------------------------------------------------------
# A write into another block's shared memory and that block's read, ordered only by __syncthreads.
fault_check(race_dsmem KERNEL k_pass BLOCK "1,0,0" THREAD "0,0,0"
  INST "ld\\.shared\\.[bsu]32 "
  WHAT "race on distributed shared memory at offset 0x0 of the shared memory of block \\(1,0,0\\) \\(rank 1 of cluster \\(0,0,0\\)\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st(\\.shared::cluster)?\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_dsmem\\.cu:@PARTNER@([^0-9,][^,]*)?, with no cluster barrier [^\n]* ordering them")
# The same through a cluster barrier whose arrive is .relaxed: it releases nothing.
fault_check(race_dsmem_relaxed KERNEL k_relay BLOCK "1,0,0" THREAD "0,0,0"
  INST "ld\\.shared\\.[bsu]32 "
  WHAT "race on distributed shared memory at offset 0x0 of the shared memory of block \\(1,0,0\\) \\(rank 1 of cluster \\(0,0,0\\)\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st(\\.shared::cluster)?\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_dsmem_relaxed\\.cu:@PARTNER@([^0-9,][^,]*)?, with no cluster barrier [^\n]* ordering them")
# A block exits while another block of its cluster may still read its shared memory.
fault_check(dsmem_exit KERNEL k_fetch BLOCK "1,0,0" THREAD "[0-9]+,0,0"
  INST "ld(\\.shared::cluster)?\\.[bsu]32 "
  WHAT "distributed shared memory access to block \\(0,0,0\\) \\(rank 0 of cluster \\(0,0,0\\)\\), which exits with nothing ordering this access before its exit \\([^\n]*\\)")
# Every warp of a cluster waits: the report lists each warp, its barrier and its line.
fault_kernel(cluster_deadlock KERNEL k_exchange BLOCK "0,0,0" THREAD "1,0,0"
  INST "barrier\\.cluster\\.wait"
  WHAT "deadlock: every warp of the cluster waits, and no thread is left to complete what they wait for:"
  REPORT "  block \\(0,0,0\\) \\(rank 0 of cluster \\(0,0,0\\)\\) warp 0 \\(lanes 0x00000001\\) at '(bar|barrier)\\.sync 0;' at [^\n]*cluster_deadlock\\.cu:[0-9]+: waits at barrier 0 for 64 threads, of which 1 have arrived\n  block \\(0,0,0\\) \\(rank 0 of cluster \\(0,0,0\\)\\) warp 0 \\(lanes 0xfffffffe\\) at 'barrier\\.cluster\\.wait[^']*' at [^\n]*cluster_deadlock\\.cu:[0-9]+: waits at the cluster barrier \\(phase 0\\) for 1 of the cluster's 128 non-exited threads, which have not arrived\n(  [^\n]*\n)*cluster_deadlock: cudaErrorLaunchFailure \\("
  FIXED)

# --- TMA multicast and remote mbarrier arrivals (sm_90) ---------------------------------------------
# A multicast's ctaMask names CTAs of the cluster: a bit past the cluster's size, or any bit but 0
# in a launch without clusters (each block a cluster of one), fails the launch.
fault_kernel(multicast_mask_outside KERNEL k_broadcast BLOCK "0,0,0" THREAD "0,0,0"
  INST "cp\\.async\\.bulk\\.shared::cluster\\.global\\.mbarrier::complete_tx::bytes\\.multicast::cluster "
  WHAT "cp\\.async\\.bulk\\.multicast::cluster with ctaMask 0x0005: it names CTA rank 2, but the cluster has 2 blocks"
  ERROR cudaErrorIllegalInstruction FIXED)
fault_kernel(multicast_no_cluster KERNEL k_broadcast BLOCK "0,0,0" THREAD "0,0,0"
  INST "cp\\.async\\.bulk\\.shared::cluster\\.global\\.mbarrier::complete_tx::bytes\\.multicast::cluster "
  WHAT "cp\\.async\\.bulk\\.multicast::cluster in a launch without clusters: ctaMask 0x0003 names CTA rank 1, but each block is a cluster of one"
  ERROR cudaErrorIllegalInstruction FIXED)
# .multicast::cluster is meant for sm_90a (ptxas advises against it for sm_90).
set_target_properties(fault_multicast_mask_outside fault_multicast_no_cluster PROPERTIES CUDA_ARCHITECTURES 90a)
# An arrive on another CTA's mbarrier releases what the arriving thread did before it to the
# waiters' try_wait (acquire); a .relaxed one releases nothing.
fault_check(race_mbar_remote KERNEL k_signal BLOCK "1,0,0" THREAD "0,0,0"
  INST "ld\\.shared(::cta)?\\.[bsu]32 "
  WHAT "race on distributed shared memory at offset 0x0 of the shared memory of block \\(1,0,0\\) \\(rank 1 of cluster \\(0,0,0\\)\\): this read of 4 bytes and an earlier write by block \\(0,0,0\\) thread \\(0,0,0\\), 'st\\.shared::cluster\\.[bsu]32 [^']*' at ([^\n]*[ (])?race_mbar_remote\\.cu:@PARTNER@([^0-9,][^,]*)?, with no cluster barrier [^\n]* ordering them")
# test_wait and try_wait name only the executing CTA's own mbarrier.
fault_kernel(mbar_remote_wait KERNEL k_handshake BLOCK "0,0,0" THREAD "0,0,0"
  INST "mbarrier\\.try_wait\\.parity\\.b64 "
  WHAT "mbarrier\\.try_wait on the mbarrier at shared offset 0x[0-9a-f]+ of block \\(1,0,0\\) \\(rank 1 of cluster \\(0,0,0\\)\\) \\(phase 0 mod 8, 1 of 1 arrivals pending, tx-count 0\\), another CTA's: only arrive, arrive_drop, expect_tx and complete_tx may name the mbarrier of another CTA of the cluster"
  ERROR cudaErrorIllegalInstruction FIXED)
