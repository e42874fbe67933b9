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
// EMIT: unknown emit kind 9; expected HPVMCompileEmitHPVM, HPVMCompileEmitMLIR, HPVMCompileEmitLLVMIR or HPVMCompileEmitLLVMBitcode
//
// hpvmCompileBuffer: memory to memory, the same LLVM IR; as bitcode on request.
// RUN: hpvm-compile-test buffer mlir llvm %hpvm_src_root/examples/pipeline.mlir %t.buf.ll '' | FileCheck %s --check-prefix=OK
// RUN: diff %t.buf.ll %t.tool.ll
// RUN: hpvm-compile-test buffer mlir bc %hpvm_src_root/examples/pipeline.mlir %t.buf.bc '' | FileCheck %s --check-prefix=OK
// RUN: llvm-dis %t.buf.bc -o - | grep -v ModuleID > %t.buf.dis.ll
// RUN: grep -v ModuleID %t.tool.ll | diff - %t.buf.dis.ll
// Its options are hpvm-lower-to-llvm-pipeline's, as hpvm-opt takes them.
// RUN: hpvm-compile-test buffer mlir mlir %hpvm_src_root/examples/sgemm.mlir %t.opts.mlir 'collapse-grids=false vectorize=false' | FileCheck %s --check-prefix=OK
// RUN: hpvm-opt --hpvm-lower-to-llvm-pipeline='collapse-grids=false vectorize=false' %hpvm_src_root/examples/sgemm.mlir -o %t.opts.tool.mlir
// RUN: diff %t.opts.mlir %t.opts.tool.mlir
// ... and print-locations.
// RUN: hpvm-compile-test buffer hpvmc hpvm %t.c.ll %t.buf.raised.mlir 'print-locations=true' | FileCheck %s --check-prefix=OK
// RUN: diff %t.buf.raised.mlir %t.raised.mlir
// An unknown option, or a value its option does not take, is refused, quoting the string.
// RUN: not hpvm-compile-test buffer mlir mlir %hpvm_src_root/examples/sgemm.mlir %t.x 'collapse-grid=false' | FileCheck %s --check-prefix=BADOPT
// BADOPT: hpvmCompileBuffer: invalid options 'collapse-grid=false' (hpvm-lower-to-llvm-pipeline's, and print-locations): <Pass-Options-Parser>: no such option collapse-grid
// BADOPT-NEXT: failed
// RUN: not hpvm-compile-test buffer mlir mlir %hpvm_src_root/examples/sgemm.mlir %t.x 'lanes=many' 2>&1 | FileCheck %s --check-prefix=BADVALUE
// BADVALUE-DAG: 'many' value invalid for uint argument
// BADVALUE-DAG: hpvmCompileBuffer: invalid options 'lanes=many' {{.*}}: a value its option does not take
// Errors in the module carry the buffer's name; kinds out of range are refused.
// RUN: not hpvm-compile-test buffer mlir llvm %t.bad.mlir %t.x '' | FileCheck %s --check-prefix=BAD
// RUN: not hpvm-compile-test buffer input3 llvm %t.bad.mlir %t.x '' | FileCheck %s --check-prefix=BUFKIND
// BUFKIND: hpvmCompileBuffer: unknown input kind 3
// RUN: not hpvm-compile-test buffer mlir emit4 %t.bad.mlir %t.x '' | FileCheck %s --check-prefix=BUFEMIT
// BUFEMIT: hpvmCompileBuffer: unknown emit kind 4
//
// hpvmRunPassPipeline: hpvm-opt --pass-pipeline in memory, the same module.
// RUN: hpvm-compile-test pipeline %hpvm_src_root/examples/edge_detection.mlir 'builtin.module(hpvm-fuse-nodes{greedy=true}, canonicalize)' %t.fused.mlir | FileCheck %s --check-prefix=OK
// RUN: hpvm-opt --pass-pipeline='builtin.module(hpvm-fuse-nodes{greedy=true}, canonicalize)' %hpvm_src_root/examples/edge_detection.mlir -o %t.fused.tool.mlir
// RUN: diff %t.fused.mlir %t.fused.tool.mlir
// An empty pipeline only verifies: what hpvm-opt prints.
// RUN: hpvm-compile-test pipeline %hpvm_src_root/examples/edge_detection.mlir '' %t.verified.mlir | FileCheck %s --check-prefix=OK
// RUN: hpvm-opt %hpvm_src_root/examples/edge_detection.mlir -o %t.verified.tool.mlir
// RUN: diff %t.verified.mlir %t.verified.tool.mlir
// A pipeline that does not parse is named, with the parser's reason.
// RUN: not hpvm-compile-test pipeline %hpvm_src_root/examples/edge_detection.mlir 'builtin.module(no-such-pass)' %t.x | FileCheck %s --check-prefix=BADPIPE
// BADPIPE: hpvmRunPassPipeline: invalid pass pipeline 'builtin.module(no-such-pass)': {{.*}}'no-such-pass' does not refer to a registered pass or pass pipeline
// BADPIPE: failed
// RUN: not hpvm-compile-test pipeline %hpvm_src_root/examples/edge_detection.mlir 'hpvm-fuse-nodes' %t.x | FileCheck %s --check-prefix=NOANCHOR
// NOANCHOR: hpvmRunPassPipeline: invalid pass pipeline 'hpvm-fuse-nodes': expected pass pipeline to be wrapped with the anchor operation type
// RUN: not hpvm-compile-test pipeline %hpvm_src_root/examples/edge_detection.mlir 'builtin.module(hpvm-fuse-nodes{bogus=1})' %t.x | FileCheck %s --check-prefix=PASSOPT
// PASSOPT: hpvmRunPassPipeline: invalid pass pipeline 'builtin.module(hpvm-fuse-nodes{bogus=1})': <Pass-Options-Parser>: no such option bogus
// An invalid module: the verifier's error, located in the named buffer.
// RUN: not hpvm-compile-test pipeline %t.bad.mlir 'builtin.module(canonicalize)' %t.x | FileCheck %s --check-prefix=BAD
// A pass that fails: its diagnostic, and no output.
// RUN: not hpvm-compile-test pipeline %hpvm_src_root/examples/edge_detection.mlir 'builtin.module(hpvm-apply-knobs{file="%t.no such.json"})' %t.x | FileCheck %s --check-prefix=PASSFAIL
// PASSFAIL: error: cannot read the knob configuration '{{.*}}no such.json'
// PASSFAIL: failed
// NULL inputs and output pointers are refused with a diagnostic.
// RUN: hpvm-compile-test buffer null | FileCheck %s --check-prefix=NULL
// NULL: hpvmCompileBuffer: expected an input buffer and an output pointer, got no input
// NULL: hpvmCompileBuffer: expected an input buffer and an output pointer, got no output pointer
// NULL: hpvmRunPassPipeline: expected an input buffer and an output pointer, got no input
// NULL: refused

/* hpvm-compile-test.c - drives libHPVMCompiler.so (HPVM/C/Compiler.h) from C:
 *   hpvm-compile-test mlir|hpvmc|inputN hpvm|mlir|llvm|emitN INPUT OUTPUT [OPTION...]
 * with OPTIONs devices=LIST, locations (print_locations), stream (on_diagnostic):
 * hpvmCompileFile;
 *   hpvm-compile-test buffer mlir|hpvmc|inputN hpvm|mlir|llvm|bc|emitN INPUT OUTPUT OPTIONS
 * hpvmCompileBuffer of INPUT's bytes (OPTIONS: its options string) into OUTPUT;
 *   hpvm-compile-test pipeline INPUT PIPELINE OUTPUT
 * hpvmRunPassPipeline on INPUT's bytes into OUTPUT.
 * Each prints the diagnostics it got back, then "compiled" or "failed", and exits 0 or 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "HPVM/C/Compiler.h"

static int input_kind(const char *name) {
  /* "inputN": kind N as a number (out of range, to test the refusal). */
  return strncmp(name, "input", 5) == 0 ? atoi(name + 5)
         : strcmp(name, "hpvmc") == 0   ? HPVMCompileInputHPVMC
                                        : HPVMCompileInputMLIR;
}

static int emit_kind(const char *name) {
  return strncmp(name, "emit", 4) == 0 ? atoi(name + 4)
         : strcmp(name, "hpvm") == 0   ? HPVMCompileEmitHPVM
         : strcmp(name, "mlir") == 0   ? HPVMCompileEmitMLIR
         : strcmp(name, "bc") == 0     ? HPVMCompileEmitLLVMBitcode
                                       : HPVMCompileEmitLLVMIR;
}

/* The whole file at `path` in memory (`*size` bytes), or NULL. */
static char *read_file(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  char *data = NULL;
  size_t capacity = 0;
  *size = 0;
  for (;;) {
    if (*size == capacity) {
      capacity = capacity ? 2 * capacity : 65536;
      data = realloc(data, capacity);
    }
    size_t got = fread(data + *size, 1, capacity - *size, file);
    if (got == 0)
      break;
    *size += got;
  }
  fclose(file);
  return data;
}

/* Prints and frees the diagnostics; writes `size` bytes of `output` (when there are) to
 * `path`; prints "compiled" or "failed" and returns the exit status. */
static int finish(int ok, char *output, size_t size, const char *path, char *diagnostics) {
  if (diagnostics)
    fputs(diagnostics, stdout);
  hpvmCompileFreeText(diagnostics);
  if (ok != (output != NULL)) {
    puts(ok ? "no output although the call succeeded" : "an output although the call failed");
    return 1;
  }
  if (output) {
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(output, 1, size, file) != size || fclose(file) != 0) {
      printf("cannot write '%s'\n", path);
      return 1;
    }
  }
  hpvmCompileFreeText(output);
  puts(ok ? "compiled" : "failed");
  return ok ? 0 : 1;
}

/* NULL where an input or an output pointer is expected is refused with a diagnostic. */
static int refuses_null(void) {
  char *output = NULL, *diagnostics = NULL;
  size_t size = 0;
  int refused = 0;
  refused += !hpvmCompileBuffer(NULL, 0, NULL, HPVMCompileInputMLIR, HPVMCompileEmitHPVM, NULL,
                                &output, &size, &diagnostics) && diagnostics && !output;
  if (diagnostics)
    fputs(diagnostics, stdout);
  hpvmCompileFreeText(diagnostics);
  refused += !hpvmCompileBuffer("module {}", 9, NULL, HPVMCompileInputMLIR, HPVMCompileEmitHPVM,
                                NULL, NULL, NULL, &diagnostics) && diagnostics;
  if (diagnostics)
    fputs(diagnostics, stdout);
  hpvmCompileFreeText(diagnostics);
  refused += !hpvmRunPassPipeline(NULL, 0, NULL, NULL, &output, &diagnostics) && diagnostics &&
             !output;
  if (diagnostics)
    fputs(diagnostics, stdout);
  hpvmCompileFreeText(diagnostics);
  /* NULL diagnostics: the call still answers. */
  refused += !hpvmRunPassPipeline("module {}", 9, NULL, NULL, NULL, NULL);
  return refused == 4;
}

static int buffer_main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[2], "null") == 0) {
    int ok = refuses_null();
    puts(ok ? "refused" : "a NULL argument was accepted");
    return ok ? 0 : 1;
  }
  if ((strcmp(argv[1], "buffer") == 0 && argc != 7) ||
      (strcmp(argv[1], "pipeline") == 0 && argc != 5)) {
    fprintf(stderr, "usage: %s buffer INPUT-KIND EMIT INPUT OUTPUT OPTIONS | pipeline INPUT "
                    "PIPELINE OUTPUT | buffer null\n", argv[0]);
    return 2;
  }
  bool compile = strcmp(argv[1], "buffer") == 0;
  const char *path = argv[compile ? 4 : 2];
  size_t size = 0;
  char *input = read_file(path, &size);
  if (!input) {
    printf("cannot read '%s'\n", path);
    return 1;
  }
  char *output = NULL, *diagnostics = NULL;
  size_t output_size = 0;
  int ok;
  if (compile) {
    ok = hpvmCompileBuffer(input, size, path, input_kind(argv[2]), emit_kind(argv[3]), argv[6],
                           &output, &output_size, &diagnostics);
  } else {
    ok = hpvmRunPassPipeline(input, size, path, argv[3], &output, &diagnostics);
    output_size = output ? strlen(output) : 0;
  }
  free(input);
  return finish(ok, output, output_size, argv[compile ? 5 : 4], diagnostics);
}

/* on_diagnostic: each diagnostic as it comes, marked so that the test tells it
 * from the ones returned at the end. */
static void print_streamed(const char *text, void *user_data) {
  int *count = user_data;
  ++*count;
  printf("streamed: %s", text);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc >= 3 && (strcmp(argv[1], "buffer") == 0 || strcmp(argv[1], "pipeline") == 0))
    return buffer_main(argc, argv);
  if (argc < 5) {
    fprintf(stderr, "usage: %s mlir|hpvmc hpvm|mlir|llvm INPUT OUTPUT [OPTION...]\n", argv[0]);
    return 2;
  }
  HPVMCompileOptions options;
  hpvmCompileOptionsInit(&options);
  options.input = (HPVMCompileInput)input_kind(argv[1]);
  options.emit = (HPVMCompileEmit)emit_kind(argv[2]);
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
