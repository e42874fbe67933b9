/* hpvm-cc - compiles HPVM programs (.mlir in the hpvm dialect), HPVM-C programs and C host code
 * into an executable linked with the HPVM runtime: the driver of the compiler library
 * (hpvmDriverMain, HPVM/C/Compiler.h; lib/CAPI/Driver.c), which the Python package calls in its
 * own process too. A crash inside the compiler is reported as an internal error (exit 70). */
#include "HPVM/C/Compiler.h"

int main(int argc, char **argv) { return hpvmDriverMain(argc, argv, HPVMDriverCatchCrashes); }
