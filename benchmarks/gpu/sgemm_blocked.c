// sgemm (HPVM-C), register-blocked with per-tile memory (sgemm_blocked.h): a grid of 128x128
// tiles, each an allocation node and a 16x16 leaf computing 8x8 elements per instance, timed
// by benchmarks/opencl/sgemm_main.h. Usage: sgemm_blocked_hpvm M N K RUNS
#include "sgemm_blocked.h"

#define SGEMM_NAME "sgemm_blocked"
#define SGEMM_ROOT blocked_root
#define SGEMM_ARGS sgemm_blocked_args
#include "../opencl/sgemm_main.h"
