/*===- Compiler.h - The HPVM compiler as a C library ---------------*- C -*-===//
 * Compiles one input in this process: an HPVM program in MLIR (.mlir), or
 * clang's LLVM IR of an HPVM-C source (imported into MLIR and raised to the
 * hpvm dialect), to the raised hpvm dialect, the llvm dialect or LLVM IR
 * (hpvmCompileBuffer: memory to memory; hpvmCompileFile: file to file); or
 * runs any textual pass pipeline over an MLIR module (hpvmRunPassPipeline, as
 * hpvm-opt --pass-pipeline). Clang stays outside: it makes the LLVM IR of C
 * sources before, and objects from the LLVM IR after (hpvmDriverMain runs it as
 * processes; hpvmDriverCompileCommand and hpvmDriverLinkCommand give its commands).
 * Diagnostics come back as text, each with its location (file:line:col of the C or
 * MLIR source).
 *
 * The compile's options are one string, the options of
 * hpvm-lower-to-llvm-pipeline as hpvm-opt takes them
 * (`--hpvm-lower-to-llvm-pipeline="devices=cuda collapse-grids=false"`), read
 * by that pipeline's own parser (CPUPipelineOptions, HPVM/Pipelines/
 * Pipelines.h), plus `print-locations` (print the operations' locations in the
 * hpvm and mlir outputs). Every option is declared once, in the option table
 * (HPVM/Pipelines/Options.def), and the drivers' flags that set them
 * (hpvm-cc's and the Python package's -f[no-]hpvm-* switches, --target=,
 * --knobs=) are read by hpvmDriverOptionsTake from the same table: a new
 * compiler option is a line of the table and the option of its pass, with no
 * change here or in the drivers.
 *
 * Library: libHPVMCompiler.so (CMake: HPVM::HPVMCompiler). Thread-safe: each
 * call has its own MLIR context.
 *===----------------------------------------------------------------------===*/
#ifndef HPVM_C_COMPILER_H
#define HPVM_C_COMPILER_H

#include <stdbool.h>
#include <stddef.h>

#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum HPVMCompileInput {
  HPVMCompileInputMLIR = 0,  /* an HPVM program in MLIR */
  HPVMCompileInputHPVMC = 1, /* clang's LLVM IR (.ll or .bc) of an HPVM-C source */
} HPVMCompileInput;

typedef enum HPVMCompileEmit {
  HPVMCompileEmitHPVM = 0,   /* the hpvm dialect (HPVM-C input: raised) */
  HPVMCompileEmitMLIR = 1,   /* lowered to the llvm dialect */
  HPVMCompileEmitLLVMIR = 2, /* lowered and exported as LLVM IR (text) */
  HPVMCompileEmitLLVMBitcode = 3, /* ... as LLVM bitcode */
} HPVMCompileEmit;

/* hpvmCompileFile's options, one field per option (kept for the programs
 * written against it; they become an options string). Its fields are fixed:
 * options added to the table since reach a compile through an options string
 * (hpvmDriverOptionsString, hpvmCompileFileWithOptions, hpvmCompileBuffer). */
typedef struct HPVMCompileOptions {
  HPVMCompileInput input;
  HPVMCompileEmit emit;
  /* Devices the GPU-hinted nodes get kernel versions for: NULL or "" (none),
   * "cuda", "opencl", or both comma-separated. */
  const char *devices;
  /* Where the device images are also written (NULL: nowhere), as
   * hpvm-lower-to-llvm-pipeline's dump-kernels. */
  const char *dump_kernels_dir;
  /* Nested grids run as one parallel-for (default true). */
  bool collapse_grids;
  /* Print the operations' locations (the C or MLIR source lines) in the hpvm
   * and mlir outputs (default false; LLVM IR always carries them). */
  bool print_locations;
  /* When set, each diagnostic is handed to it as soon as it is emitted (text
   * as the tools print it, with its location, NUL-terminated, valid during the
   * call), and hpvmCompileFile's `*diagnostics` stays NULL: a caller sees what
   * was reported even if the compile never returns. */
  void (*on_diagnostic)(const char *text, void *user_data);
  void *user_data;
  /* Consecutive x instances of imported-C leaves run as vector lanes
   * (hpvm-vectorize; default true). */
  bool vectorize;
  /* Report, as remarks, which leaves were vectorized at which width and why
   * the others were not (default false). */
  bool vectorize_remarks;
  /* Bits of the target's vector registers for the lanes (0: the host CPU's). */
  unsigned vector_bits;
  /* Lanes per group and rows per block of the lane variants (0: chosen from
   * the target: a cache line of lanes, rows from the register file). */
  unsigned lanes;
  unsigned rows;
  /* A configuration of approximation knobs (JSON) applied to the program's
   * tensor ops before it is emitted (hpvm-apply-knobs); NULL or "": none. */
  const char *knobs_file;
  /* The functions the lowering generates get debug subprograms and line
   * tables from their source locations, for debuggers and profilers (hpvm-cc
   * -g; default false). */
  bool line_tables;
  /* Each leaf with one caller is inlined into it (convert-hpvm-to-cpu's
   * inline-leaves; default true). */
  bool inline_leaves;
  /* The large parallel loops of leaves instantiated once run on the runtime's
   * pool (hpvm-parallel-leaf-loops; default true). */
  bool parallel_leaves;
  /* Every legal pair of sibling leaves is fused before the lowering
   * (hpvm-fuse-nodes{greedy=true}; default false). */
  bool fuse_nodes;
  /* Chains of single-tensor-op leaves (conv2d -> add -> activation -> pool,
   * mul -> add -> activation) are fused before the lowering
   * (hpvm-fuse-tensor-nodes; default false; hpvm-cc turns it on). */
  bool fuse_tensor_nodes;
  /* An assembly file that receives the module's large constants (a model's
   * weights) as .incbin directives, their data in a file beside it or in the
   * module's parameter archive; the LLVM IR then only declares them
   * (hpvm-externalize-constants; NULL or "": they stay in the IR). The
   * caller assembles the file and links its object with the program's. */
  const char *constants_asm;
  /* Which convolutions and products of tensor kernels run in work-group tiles:
   * "auto", "always" or "never" (convert-hpvm-to-gpu's tensor-tiles; NULL or "": auto). */
  const char *tensor_tiles;
  /* Sanitizers whose instrumentation every function of the program gets when
   * clang compiles the LLVM IR with the same -fsanitize: NULL or "" (none),
   * "address", "thread", ..., comma-separated (hpvm-lower-to-llvm-pipeline's
   * sanitize; hpvm-cc -fsanitize). */
  const char *sanitize;
} HPVMCompileOptions;

/* The defaults: MLIR input, LLVM IR output, no devices, nested grids
 * collapsed, leaves vectorized and inlined, no fusion. */
MLIR_CAPI_EXPORTED void hpvmCompileOptionsInit(HPVMCompileOptions *options);

/* Compiles `input_path` into `output_path` ("-": standard output; LLVM IR as
 * bitcode when the path ends in ".bc", else as text). Returns true
 * on success. `*diagnostics` (when `diagnostics` is not NULL) receives the
 * diagnostics printed as the tools print them, NUL-terminated, or NULL when
 * there were none; free it with hpvmCompileFreeText. Nothing is written to
 * `output_path` on failure. The options become an options string and the
 * compile is hpvmCompileBuffer's. */
MLIR_CAPI_EXPORTED bool hpvmCompileFile(const char *input_path, const char *output_path,
                                        const HPVMCompileOptions *options,
                                        char **diagnostics);

/* hpvmCompileFile with its options as an options string (hpvmCompileBuffer's
 * `pipeline_options`), `input_kind` an HPVMCompileInput and `emit` an
 * HPVMCompileEmit (HPVMCompileEmitLLVMIR writes bitcode when `output_path`
 * ends in ".bc"); `on_diagnostic` and `user_data` (NULL: none) as
 * HPVMCompileOptions' fields, `*diagnostics` as hpvmCompileFile's. */
MLIR_CAPI_EXPORTED bool hpvmCompileFileWithOptions(
    const char *input_path, const char *output_path, int input_kind, int emit,
    const char *pipeline_options, void (*on_diagnostic)(const char *text, void *user_data),
    void *user_data, char **diagnostics);

/* The drivers' options (hpvm-cc's, the Python package's): the pipeline options
 * that their command lines set, read from the option table
 * (HPVM/Pipelines/Options.def). Created with the drivers' defaults (the
 * table's DRIVER_DEFAULT: hpvm-cc fuses tensor nodes, the pipeline does not);
 * one per command line, not shared between threads. */
typedef struct HPVMDriverOptions HPVMDriverOptions;
MLIR_CAPI_EXPORTED HPVMDriverOptions *hpvmDriverOptionsCreate(void);
MLIR_CAPI_EXPORTED void hpvmDriverOptionsDestroy(HPVMDriverOptions *options);

/* Takes one argument of a driver's command line: -fSWITCH and -fno-SWITCH,
 * -fCOUNT=N and -fCHOICE=VALUE of the table, --target=cpu|gpu|opencl (the
 * devices) and --knobs=FILE (which must exist). Returns 1 when it set an
 * option, 0 when `argument` is none of these (the caller's: inputs, -o,
 * clang's and the linker's flags), -1 when it is one with a wrong value:
 * then `*error` (when `error` is not NULL) receives the message without a
 * prefix ("'-fhpvm-lanes=1' expects a count from 2 to 64, found '1'"), to be
 * freed with hpvmCompileFreeText; else `*error` is NULL. */
MLIR_CAPI_EXPORTED int hpvmDriverOptionsTake(HPVMDriverOptions *options, const char *argument,
                                             char **error);

/* Sets the pipeline option `key` to `value` as the options string writes it
 * ("vector-bits", "512"; "constants-asm", a path; "devices", "cuda,opencl");
 * false, with `*error` as above, for an unknown key or a wrong value. */
MLIR_CAPI_EXPORTED bool hpvmDriverOptionsSet(HPVMDriverOptions *options, const char *key,
                                             const char *value, char **error);

/* The value of the pipeline option `key` as text ("true", "0", a path, a
 * comma-separated list), or NULL for an unknown key; free it with
 * hpvmCompileFreeText. */
MLIR_CAPI_EXPORTED char *hpvmDriverOptionsGet(const HPVMDriverOptions *options,
                                              const char *key);

/* Every option as hpvmCompileBuffer's options string (`key=value`, separated
 * by spaces, strings quoted; empty strings and lists left out). */
MLIR_CAPI_EXPORTED char *hpvmDriverOptionsString(const HPVMDriverOptions *options);

/* The pass pipeline the options build (hpvm-lower-to-llvm-pipeline), as
 * textual pipeline: every pass with its options ("builtin.module(
 * hpvm-check-replication,...,convert-hpvm-to-cpu{collapse-grids=true
 * inline-leaves=true},...)"); hpvm-cc --print-pipeline prints it. */
MLIR_CAPI_EXPORTED char *hpvmDriverOptionsPipeline(const HPVMDriverOptions *options);

/* hpvm-cc --help's lines about the table's flags. */
MLIR_CAPI_EXPORTED char *hpvmDriverOptionsHelp(void);

/* The table's flags, one per line, tab-separated: "switch", FLAG, KEY and the
 * drivers' default ("true", "false"); "count", FLAG, KEY, "LOW-HIGH";
 * "choice", FLAG, KEY, the choices ("auto|always|never"). Tests go through it. */
MLIR_CAPI_EXPORTED char *hpvmDriverOptionsFlags(void);

/* Lanes as wide as the vector registers of the CPU the code is for: when
 * vectorizing and one of the `count` clang flags is -march= or -mcpu=, runs
 * `clang` with the -m flags among them to read the macros it predefines for
 * that CPU and sets vector-bits (512 with AVX-512, 256 with AVX, else 128; 0,
 * the host's, when clang cannot say); returns whether it ran clang. */
MLIR_CAPI_EXPORTED bool hpvmDriverOptionsProbeVectorBits(HPVMDriverOptions *options,
                                                         const char *clang,
                                                         const char *const *flags,
                                                         size_t count);

/* Compiles the `size` bytes at `input` (an HPVMCompileInput; `buffer_name`
 * names it in locations and diagnostics, NULL: "<buffer>") to an
 * HPVMCompileEmit. `pipeline_options` (NULL or "": the defaults) is a string
 * of `key=value` options of hpvm-lower-to-llvm-pipeline, separated by spaces,
 * values with spaces quoted ("devices=cuda collapse-grids=false
 * constants-asm='/tmp/a b/x.s' knobs=k.json"), and print-locations=true|false;
 * an unknown key or a bad value fails the call with a diagnostic naming it.
 * On success `*output` receives the result (NUL-terminated after its
 * `*output_size` bytes; bitcode may hold NULs), to be freed with
 * hpvmCompileFreeText; on failure it is NULL. `*diagnostics` as
 * hpvmCompileFile's. */
MLIR_CAPI_EXPORTED bool hpvmCompileBuffer(const char *input, size_t size,
                                          const char *buffer_name, int input_kind,
                                          int emit, const char *pipeline_options,
                                          char **output, size_t *output_size,
                                          char **diagnostics);

/* Parses the MLIR module of the `size` bytes at `input` (`buffer_name` as
 * above), verifies it and runs the textual pass pipeline `pipeline` on it, as
 * hpvm-opt --pass-pipeline does ("builtin.module(hpvm-fuse-nodes{greedy=true},
 * canonicalize)"; NULL or "": none, the module is only verified), with every
 * pass hpvm-opt registers (upstream MLIR's and the project's) but its test
 * passes. On success `*output` receives the module as hpvm-opt prints it,
 * NUL-terminated, to be freed with hpvmCompileFreeText; on failure it is NULL.
 * A pipeline that does not parse fails the call with a diagnostic quoting it.
 * `*diagnostics` as hpvmCompileFile's. */
MLIR_CAPI_EXPORTED bool hpvmRunPassPipeline(const char *input, size_t size,
                                            const char *buffer_name, const char *pipeline,
                                            char **output, char **diagnostics);

/* Splits the LLVM bitcode of the `size` bytes at `input` into at most `parts`
 * modules whose objects, linked together, are the module's: so that clang
 * compiles them on several cores at once (hpvm-cc and the Python package do,
 * one part per job). A function stays with the functions it calls that may be
 * inlined (all but noinline ones); such clusters go to the least loaded part,
 * largest first; a local symbol another part uses becomes a hidden global one
 * (renamed with the module's digest), local constants without addresses are
 * copied into the parts that read them. No part is made smaller than
 * `min_part_size` instructions (0: no minimum): a small module stays one part.
 * On success `*count` receives the number of parts (1: the input as it came),
 * `part_sizes[i]` the size of part i (`part_sizes` holds `parts` entries) and
 * `*output` the parts one after the other, to be freed with
 * hpvmCompileFreeText. `*diagnostics` as hpvmCompileFile's. */
MLIR_CAPI_EXPORTED bool hpvmSplitBitcode(const char *input, size_t size, unsigned parts,
                                         size_t min_part_size, char **output,
                                         size_t *part_sizes, unsigned *count,
                                         char **diagnostics);

/* The programs device builds run, as hpvm-embed-kernels finds them: one line
 * per tool, "llvm-spirv\t<path>", "ptxas\t<path>", "fatbinary\t<path>",
 * the path empty where the tool is not found (the build then makes no SPIR 1.2
 * fallback, no cubins). NUL-terminated; free it with hpvmCompileFreeText. */
MLIR_CAPI_EXPORTED char *hpvmDeviceTools(void);

/* Lowers clang's LLVM IR (bitcode or text) of a Hetero-C++ source, made
 * without optimization (clang -O1 -Xclang -disable-llvm-passes: the regions
 * are still where the source put them), to HPVM-C: each section, task and
 * parallel loop outlined into a node function, the markers rewritten as
 * HPVM-C calls (docs/HeteroCxx.md). A module without markers passes through.
 * Writes bitcode to `output_path`, text when it is "-" or ends in ".ll";
 * nothing on failure. `*diagnostics` as hpvmCompileFile's: each error at its
 * C++ line. The caller optimizes the result (hpvm-cc runs clang on it) and
 * compiles it as HPVM-C. `flags` is a set of HPVMHeteroCxxFlags. */
typedef enum HPVMHeteroCxxFlags {
  /* The markers are removed instead and each launch calls its root: the
   * program as plain sequential C++ (hpvm-cc -fhetero-sequential). */
  HPVMHeteroCxxSequential = 1,
  /* A launch region in a loop stays a launch per iteration even where its
   * iterations could overlap as a stream (hpvm-cc -fno-hetero-streaming). */
  HPVMHeteroCxxNoStreaming = 2,
} HPVMHeteroCxxFlags;
MLIR_CAPI_EXPORTED bool hpvmLowerHeteroCxxFile(const char *input_path, const char *output_path,
                                               unsigned flags, char **diagnostics);

/* hpvm-cc's driver: the command line `argv` (`argc` arguments, argv[0] the program's name)
 * compiled and linked as hpvm-cc does it (hpvm-cc --help), clang run as processes, the HPVM
 * steps in this process; messages on this process's stderr (and -v's, --help's on stdout).
 * Returns hpvm-cc's exit status (0, 1 for an error in the program or the command line, 70 for
 * an internal error). With HPVMDriverCatchCrashes (hpvm-cc's main), a crash inside the compiler
 * is reported as an internal error and ends the process; without it (a caller with its own
 * signal handlers: Python) signals are left alone. One call at a time per process (calls wait
 * for each other). */
enum { HPVMDriverCatchCrashes = 1 };
MLIR_CAPI_EXPORTED int hpvmDriverMain(int argc, char **argv, unsigned flags);

/* hpvm-cc's clang commands for the command line `argv` (`argc` arguments, argv[0] the program's
 * name), read as hpvmDriverMain reads it (its inputs must exist; nothing is run), built by the
 * functions hpvmDriverMain builds its own with: so that a caller that runs clang itself (the
 * Python package: the parts of a module at once) runs hpvm-cc's commands. Each comes back as
 * its arguments, each ended by a NUL, `*size` bytes in all, to be freed with
 * hpvmCompileFreeText; NULL for a wrong command line, with `*error` as hpvmDriverOptionsTake's.
 * hpvmDriverCompileCommand: the compile of `input` (LLVM IR, or the assembly of the large
 * constants, named by its ".s") into the object `object`, at the command line's -O level, for
 * this machine (-march=native) unless it names a CPU, with its code generation flags.
 * hpvmDriverLinkCommand: the link of the `count` `objects` into `output` with the command
 * line's other inputs, the runtime (the one of its sanitizers) and its linker flags; with lld
 * where it is installed beside clang, unless the command line chose a linker. */
MLIR_CAPI_EXPORTED char *hpvmDriverCompileCommand(int argc, char **argv, const char *input,
                                                  const char *object, size_t *size,
                                                  char **error);
MLIR_CAPI_EXPORTED char *hpvmDriverLinkCommand(int argc, char **argv,
                                               const char *const *objects, size_t count,
                                               const char *output, size_t *size,
                                               char **error);

/* The clang hpvm-cc runs (the one the build found: clang-22, else clang), to be freed with
 * hpvmCompileFreeText. */
MLIR_CAPI_EXPORTED char *hpvmDriverClang(void);

MLIR_CAPI_EXPORTED void hpvmCompileFreeText(char *text);

#ifdef __cplusplus
}
#endif

#endif /* HPVM_C_COMPILER_H */
