// The compiler library (libHPVMCompiler.so, HPVM/C/Compiler.h) driven from C: the same
// results as the tools, diagnostics returned with their locations, nothing written on failure.
//
// An HPVM program in MLIR to LLVM IR: what hpvm-translate --hpvm-to-llvmir writes.
// RUN: hpvm-compile-test mlir llvm %hpvm_src_root/examples/pipeline.mlir %t.lib.ll | FileCheck %s --check-prefix=OK
// RUN: hpvm-translate --hpvm-to-llvmir %hpvm_src_root/examples/pipeline.mlir -o %t.tool.ll
// RUN: diff %t.lib.ll %t.tool.ll
// OK: compiled
//
// To the llvm dialect: what hpvm-opt --hpvm-lower-to-llvm-pipeline writes.
// RUN: hpvm-compile-test mlir mlir %hpvm_src_root/examples/pipeline.mlir %t.lib.mlir | FileCheck %s --check-prefix=OK
// RUN: hpvm-opt --hpvm-lower-to-llvm-pipeline %hpvm_src_root/examples/pipeline.mlir -o %t.tool.mlir
// RUN: diff %t.lib.mlir %t.tool.mlir
//
// HPVM-C: clang's LLVM IR imported and raised in the library, with the C lines.
// RUN: clang-22 -O1 -g -S -emit-llvm -I %hpvm_src_root/runtime/include -DDEVICE=CPU_TARGET %hpvm_src_root/test/HPVMC/run/vector_add.c -o %t.c.ll
// RUN: hpvm-compile-test hpvmc hpvm %t.c.ll %t.raised.mlir locations | FileCheck %s --check-prefix=OK
// RUN: FileCheck %s --check-prefix=RAISED < %t.raised.mlir
// RAISED: #loc{{[0-9]+}} = loc("{{.*}}vector_add.c":{{[0-9]+}}:{{[0-9]+}})
// RAISED: hpvm.leaf private @vadd_leaf
// RAISED: hpvm.launch @vadd_root
// Without print_locations, none (as hpvm-opt prints by default).
// RUN: hpvm-compile-test hpvmc hpvm %t.c.ll %t.raised-bare.mlir | FileCheck %s --check-prefix=OK
// RUN: FileCheck %s --check-prefix=BARE < %t.raised-bare.mlir
// BARE: hpvm.leaf private @vadd_leaf
// BARE-NOT: {{ loc\(}}
// ... and on to LLVM IR in one call.
// RUN: hpvm-compile-test hpvmc llvm %t.c.ll %t.c.lowered.ll | FileCheck %s --check-prefix=OK
// RUN: FileCheck %s --check-prefix=LOWERED < %t.c.lowered.ll
// LOWERED: call ptr @hpvm_rt_launch
//
// Errors come back as text with their locations, and no output is written.
// RUN: printf '%%s\n' 'hpvm.leaf @bad(%%a: i32) {' '  hpvm.return %%a : i32' '}' > %t.bad.mlir
// RUN: rm -f %t.bad.ll
// RUN: not hpvm-compile-test mlir llvm %t.bad.mlir %t.bad.ll | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.bad.ll
// BAD: bad.mlir:2:3: error: 'hpvm.return' op returns (i32) but @bad has outputs ()
// BAD: failed
// With on_diagnostic, each one is handed over as it is emitted, none returned at the end.
// RUN: not hpvm-compile-test mlir llvm %t.bad.mlir %t.bad.ll stream | FileCheck %s --check-prefix=STREAM
// RUN: not test -e %t.bad.ll
// STREAM: streamed: {{.*}}bad.mlir:2:3: error: 'hpvm.return' op returns (i32) but @bad has outputs ()
// STREAM-NEXT: hpvm.return
// STREAM: failed
// The library's own errors (an output it cannot write) come the same way.
// RUN: not hpvm-compile-test mlir llvm %hpvm_src_root/examples/pipeline.mlir %t.nodir/out.ll stream | FileCheck %s --check-prefix=STREAM-LIB
// STREAM-LIB: streamed: hpvmCompileFile: {{.*}}out.ll
// STREAM-LIB: failed
// RUN: not hpvm-compile-test mlir llvm %t.missing.mlir %t.bad.ll | FileCheck %s --check-prefix=MISSING
// MISSING: missing.mlir
// MISSING: failed
// RUN: printf 'not llvm ir\n' > %t.notir.ll
// RUN: not hpvm-compile-test hpvmc llvm %t.notir.ll %t.bad.ll | FileCheck %s --check-prefix=NOTIR
// NOTIR: error: cannot read the LLVM IR of an HPVM-C source: {{.*}}notir.ll:1:1: error:
// NOTIR: failed
// Options out of range are refused, each with what was expected.
// RUN: not hpvm-compile-test input7 llvm %t.bad.mlir %t.bad.ll | FileCheck %s --check-prefix=KINDS
// KINDS: unknown input kind 7; expected HPVMCompileInputMLIR or HPVMCompileInputHPVMC
// RUN: not hpvm-compile-test mlir emit9 %t.bad.mlir %t.bad.ll | FileCheck %s --check-prefix=EMIT
// EMIT: unknown emit kind 9; expected HPVMCompileEmitHPVM, HPVMCompileEmitMLIR or HPVMCompileEmitLLVMIR

/* hpvm-compile-test.c - drives libHPVMCompiler.so (HPVM/C/Compiler.h) from C:
 *   hpvm-compile-test mlir|hpvmc|inputN hpvm|mlir|llvm|emitN INPUT OUTPUT [OPTION...]
 * with OPTIONs devices=LIST, locations (print_locations), stream (on_diagnostic);
 * prints the diagnostics it got back, then "compiled" or "failed", and exits 0 or 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "HPVM/C/Compiler.h"

/* on_diagnostic: each diagnostic as it comes, marked so that the test tells it
 * from the ones returned at the end. */
static void print_streamed(const char *text, void *user_data) {
  int *count = user_data;
  ++*count;
  printf("streamed: %s", text);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s mlir|hpvmc hpvm|mlir|llvm INPUT OUTPUT [OPTION...]\n", argv[0]);
    return 2;
  }
  HPVMCompileOptions options;
  hpvmCompileOptionsInit(&options);
  /* "inputN" / "emitN": kind N as a number (out of range, to test the refusal). */
  options.input = strncmp(argv[1], "input", 5) == 0      ? (HPVMCompileInput)atoi(argv[1] + 5)
                  : strcmp(argv[1], "hpvmc") == 0        ? HPVMCompileInputHPVMC
                                                         : HPVMCompileInputMLIR;
  options.emit = strncmp(argv[2], "emit", 4) == 0 ? (HPVMCompileEmit)atoi(argv[2] + 4)
                 : strcmp(argv[2], "hpvm") == 0   ? HPVMCompileEmitHPVM
                 : strcmp(argv[2], "mlir") == 0   ? HPVMCompileEmitMLIR
                                                  : HPVMCompileEmitLLVMIR;
  int streamed = 0;
  for (int i = 5; i < argc; ++i) {
    if (strncmp(argv[i], "devices=", 8) == 0) {
      options.devices = argv[i] + 8;
    } else if (strcmp(argv[i], "locations") == 0) {
      options.print_locations = true;
    } else if (strcmp(argv[i], "stream") == 0) {
      options.on_diagnostic = print_streamed;
      options.user_data = &streamed;
    } else {
      fprintf(stderr, "unknown option '%s'; expected devices=LIST, locations or stream\n",
              argv[i]);
      return 2;
    }
  }
  char *diagnostics = NULL;
  int ok = hpvmCompileFile(argv[3], argv[4], &options, &diagnostics);
  if (diagnostics)
    fputs(diagnostics, stdout);
  if (options.on_diagnostic && diagnostics) {
    puts("diagnostics were returned although on_diagnostic was set");
    return 1;
  }
  hpvmCompileFreeText(diagnostics);
  /* A NULL output is refused with a diagnostic, not a crash. */
  options.on_diagnostic = NULL;
  char *refused = NULL;
  if (hpvmCompileFile(argv[3], NULL, &options, &refused) || !refused) {
    puts("a NULL output path was accepted");
    return 1;
  }
  hpvmCompileFreeText(refused);
  puts(ok ? "compiled" : "failed");
  return ok ? 0 : 1;
}
