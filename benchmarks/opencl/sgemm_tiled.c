// sgemm (HPVM-C), tiled with per-tile scratch memory (sgemm_tiled.h): a grid of 16x16 tiles,
// each an allocation node and a 16x16 leaf with barriers, timed by sgemm_main.h.
// Usage: sgemm_tiled_hpvm M N K RUNS
#include "sgemm_tiled.h"

#define SGEMM_NAME "sgemm_tiled"
#define SGEMM_ROOT root
#define SGEMM_ARGS sgemm_tiled_args
#include "sgemm_main.h"
