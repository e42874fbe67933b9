/* The tensor kernels' compute loops for the baseline ISA. */
#define SUFFIX generic
#include "kernels_isa.inc"
