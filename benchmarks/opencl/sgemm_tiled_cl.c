// sgemm, tiled, hand-written in OpenCL C: sgemm_cl.c with its tiled kernel (the algorithm of
// sgemm_tiled.h). Usage: sgemm_tiled_cl M N K RUNS | sgemm_tiled_cl --probe
#define SGEMM_TILED 1
#include "sgemm_cl.c"
