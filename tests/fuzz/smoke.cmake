# SPDX-License-Identifier: GPL-3.0-or-later
# CTest smoke run of one libFuzzer target: cmake -DFUZZER=exe -DSCRATCH=dir -DSEEDS=dir -DRUNS=n -P smoke.cmake
# Runs every seed, then RUNS mutations from a fixed random seed (at most 60 s). New inputs go to the emptied SCRATCH folder (libFuzzer writes to its
# first corpus folder), so the committed seeds stay untouched; crash inputs are written to SCRATCH too.
file(REMOVE_RECURSE ${SCRATCH})
file(MAKE_DIRECTORY ${SCRATCH}/corpus)
execute_process(
  COMMAND ${FUZZER} -seed=1 -runs=${RUNS} -max_total_time=60 -timeout=20 -rss_limit_mb=4096 -malloc_limit_mb=65536 -print_final_stats=1
    -artifact_prefix=${SCRATCH}/ ${SCRATCH}/corpus ${SEEDS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} found a problem (exit ${rc}); the input is in ${SCRATCH}")
endif()
