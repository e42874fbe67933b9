/* uses_compiler.c - an outside project compiles an HPVM program in its own process through the
 * installed compiler library: argv[1] (.mlir) to LLVM IR in argv[2]. */
#include <stdio.h>
#include <string.h>

#include "HPVM/C/Compiler.h"

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  HPVMCompileOptions options;
  hpvmCompileOptionsInit(&options);
  char *diagnostics = NULL;
  bool ok = hpvmCompileFile(argv[1], argv[2], &options, &diagnostics);
  if (diagnostics)
    fputs(diagnostics, stderr);
  hpvmCompileFreeText(diagnostics);
  FILE *output = fopen(argv[2], "r");
  char line[256];
  bool has_runtime_call = false;
  while (ok && output && fgets(line, sizeof(line), output))
    has_runtime_call |= strstr(line, "@hpvm_rt_") != NULL; /* a runtime call */
  if (output)
    fclose(output);
  printf("compiler: %s\n", ok && has_runtime_call ? "ok" : "failed");
  return ok && has_runtime_call ? 0 : 1;
}
