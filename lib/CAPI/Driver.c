/* Driver.c - hpvm-cc's driver in the compiler library (hpvmDriverMain, HPVM/C/Compiler.h):
 * compiles HPVM programs (.mlir in the hpvm dialect), HPVM-C programs and C host code into an
 * executable linked with the HPVM runtime. Clang (C to LLVM IR, LLVM IR to objects, the link)
 * runs as separate processes; importing, raising and lowering HPVM happen in the calling
 * process. The hpvm-cc executable is its main; the Python package calls it in its own process
 * (hpvm.toolchain.run_driver). */
#define _GNU_SOURCE /* memmem, dladdr; implies _POSIX_C_SOURCE 200809L */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <unistd.h>

#include "HPVM/C/Compiler.h"
#include "hpvm-cc-config.h"

extern char **environ;

/* A growable NULL-terminated list of strings (argv vectors, file lists). */
typedef struct {
  char **items;
  size_t count, capacity;
} list_t;

/* Exit status for a failure of the compiler itself (a stage killed by a signal, a stage that
 * cannot be started), as opposed to 1 for an error in the user's program: tests that expect a
 * diagnostic require 1, so a crash after printing the diagnostic cannot pass for one.
 * 70 is EX_SOFTWARE of <sysexits.h>. */
enum { EXIT_USER_ERROR = 1, EXIT_INTERNAL_ERROR = 70 };

/* Where the driver's call ends early (a wrong command line, a failure of the driver itself),
 * with the exit status: the caller of hpvmDriverMain keeps running. */
static jmp_buf driver_exit;
static void leave(int status) __attribute__((noreturn));
static void leave(int status) { longjmp(driver_exit, status); }

/* Whether fail and fail_internal keep their message in failure_text instead of printing it
 * (hpvmDriverCompileCommand and hpvmDriverLinkCommand: their caller reports it). */
static bool keep_failure = false;
static char *failure_text = NULL;

/* `format` with `detail`, as the message of a failure (`kind` "error", "internal error"), then
 * the driver's call ends with `status`. */
static void report_failure(const char *kind, const char *format, const char *detail,
                           int status) __attribute__((noreturn));
static void report_failure(const char *kind, const char *format, const char *detail,
                           int status) {
  if (!keep_failure) {
    fprintf(stderr, "hpvm-cc: %s: ", kind);
    fprintf(stderr, format, detail);
    fputc('\n', stderr);
  } else {
    int size = snprintf(NULL, 0, format, detail);
    failure_text = size < 0 ? NULL : malloc((size_t)size + 1);
    if (failure_text)
      snprintf(failure_text, (size_t)size + 1, format, detail);
  }
  leave(status);
}

/* Reports an error in the command line or the program and exits with status 1. */
static void fail(const char *format, const char *detail) {
  report_failure("error", format, detail, EXIT_USER_ERROR);
}

/* Reports a failure of hpvm-cc itself (out of memory, no temporary directory) and exits. */
static void fail_internal(const char *format, const char *detail) {
  report_failure("internal error", format, detail, EXIT_INTERNAL_ERROR);
}

/* Whether `arg` is -f`name` or -fno-`name`; then `*value` is set to which. */
static bool parse_switch(const char *arg, const char *name, bool *value) {
  if (strncmp(arg, "-f", 2) != 0)
    return false;
  bool on = strncmp(arg + 2, "no-", 3) != 0;
  if (strcmp(arg + (on ? 2 : 5), name) != 0)
    return false;
  *value = on;
  return true;
}

static char *copy(const char *text) {
  char *result = strdup(text);
  if (!result)
    fail_internal("out of memory%s", "");
  return result;
}

static void push(list_t *list, const char *item) {
  if (list->count + 2 > list->capacity) {
    list->capacity = list->capacity ? 2 * list->capacity : 16;
    list->items = realloc(list->items, list->capacity * sizeof(char *));
    if (!list->items)
      fail_internal("out of memory%s", "");
  }
  list->items[list->count++] = copy(item);
  list->items[list->count] = NULL;
}

static void append(list_t *list, const list_t *other) {
  for (size_t i = 0; i < other->count; ++i)
    push(list, other->items[i]);
}

static char *format2(const char *a, const char *b) {
  size_t size = strlen(a) + strlen(b) + 1;
  char *result = malloc(size);
  if (!result)
    fail_internal("out of memory%s", "");
  snprintf(result, size, "%s%s", a, b);
  return result;
}

static bool ends_with(const char *text, const char *suffix) {
  size_t n = strlen(text), m = strlen(suffix);
  return n >= m && strcmp(text + n - m, suffix) == 0;
}

/* "dir/prog.mlir" -> "prog" */
static char *stem(const char *path) {
  const char *base = strrchr(path, '/');
  char *result = copy(base ? base + 1 : path);
  char *dot = strrchr(result, '.');
  if (dot && dot != result)
    *dot = '\0';
  return result;
}

static double seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static bool verbose = false;
/* Set when a stage failed by no fault of the program (see EXIT_INTERNAL_ERROR). */
static bool internal_failure = false;


/* Starts one stage as a process; false (an internal failure) when it cannot. */
static bool start_stage(const char *stage, list_t *argv, pid_t *pid) {
  int error = posix_spawnp(pid, argv->items[0], NULL, NULL, argv->items, environ);
  if (error != 0) {
    fprintf(stderr, "hpvm-cc: internal error: %s: cannot run %s: %s\n", stage, argv->items[0],
            strerror(error));
    internal_failure = true;
  }
  return error == 0;
}

static bool stage_done(const char *stage, list_t *argv, int status, double start);

/* Runs one stage; returns true when it exited with status 0.  The stage's own diagnostics
 * (with source locations) go to stderr; -v prints the command and its duration. */
static bool run_stage(const char *stage, list_t *argv) {
  double start = seconds();
  pid_t pid;
  if (!start_stage(stage, argv, &pid))
    return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      fail_internal("waitpid failed: %s", strerror(errno));
  return stage_done(stage, argv, status, start);
}

/* Runs `count` stages, at most `jobs` at once; true when each exited with status 0 (after a
 * failure no more start, and those running are waited for). */
static bool run_stages(const char *stage, list_t *commands, size_t count, unsigned jobs) {
  pid_t *pids = calloc(count ? count : 1, sizeof(pid_t));
  double *starts = calloc(count ? count : 1, sizeof(double));
  if (!pids || !starts)
    fail_internal("%s", "out of memory");
  size_t next = 0, running = 0;
  bool ok = true;
  while ((ok && next < count) || running > 0) {
    while (ok && next < count && running < jobs) {
      starts[next] = seconds();
      ok = start_stage(stage, &commands[next], &pids[next]);
      if (!ok)
        pids[next] = 0;
      running += ok;
      ++next;
    }
    if (running == 0)
      break;
    /* Only this call's children: the process calling the driver (Python) may have its own. */
    bool reaped = false;
    for (size_t i = 0; i < next; ++i) {
      if (pids[i] <= 0)
        continue; /* done, or never started */
      int status = 0;
      pid_t pid = waitpid(pids[i], &status, WNOHANG);
      if (pid < 0 && errno != EINTR)
        fail_internal("waitpid failed: %s", strerror(errno));
      if (pid == pids[i]) {
        pids[i] = 0;
        --running;
        reaped = true;
        ok = stage_done(stage, &commands[i], status, starts[i]) && ok;
      }
    }
    if (!reaped)
      nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
  }
  free(pids);
  free(starts);
  return ok;
}

/* What a stage that ended with `status` did: -v prints its command and duration; crashes are
 * internal errors. True when it exited with status 0. */
static bool stage_done(const char *stage, list_t *argv, int status, double start) {
  if (verbose) {
    fprintf(stderr, "hpvm-cc: [%s %.3f s]", stage, seconds() - start);
    for (size_t i = 0; i < argv->count; ++i)
      fprintf(stderr, " %s", argv->items[i]);
    fputc('\n', stderr);
  }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "hpvm-cc: internal error: %s (%s) was killed by signal %d (%s)\n", stage,
            argv->items[0], WTERMSIG(status), strsignal(WTERMSIG(status)));
    internal_failure = true;
    return false;
  }
  /* Every stage reports an error in its input with status 1; another status is a crash that
   * a handler turned into an exit code. */
  if (WIFEXITED(status) && WEXITSTATUS(status) > 1) {
    fprintf(stderr, "hpvm-cc: internal error: %s (%s) exited with status %d\n", stage,
            argv->items[0], WEXITSTATUS(status));
    internal_failure = true;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether hpvmDriverMain's caller asked for the crash handlers (hpvm-cc; not Python's). */
static bool catch_crashes = false;

/* What the crash handler needs: the library stage in progress and the files to remove. */
static const char *volatile current_stage = NULL;
static const char *temp_dir = NULL;
static list_t *temp_files = NULL;

static void write_text(const char *text) {
  size_t length = strlen(text);
  while (length > 0) {
    ssize_t written = write(STDERR_FILENO, text, length);
    if (written <= 0)
      return;
    text += written;
    length -= (size_t)written;
  }
}

/* A crash inside the compiler library (in this thread or one of MLIR's): report it as an
 * internal error, as a crashed stage process was reported, and leave no temporaries.
 * Only async-signal-safe calls. */
static void on_crash(int signal_number) {
  char number[16];
  int n = signal_number, i = (int)sizeof(number) - 1;
  number[i] = '\0';
  do
    number[--i] = (char)('0' + n % 10);
  while ((n /= 10) > 0 && i > 0);
  write_text("hpvm-cc: internal error: ");
  write_text(current_stage ? current_stage : "hpvm-cc");
  write_text(" crashed with signal ");
  write_text(number + i);
  write_text(" (");
  write_text(signal_number == SIGSEGV   ? "Segmentation fault"
             : signal_number == SIGBUS  ? "Bus error"
             : signal_number == SIGILL  ? "Illegal instruction"
             : signal_number == SIGFPE  ? "Floating point exception"
             : signal_number == SIGABRT ? "Aborted"
                                        : "signal");
  write_text(")\nhpvm-cc: internal error: compilation failed (exit status 70)\n");
  if (temp_files && !getenv("HPVM_CC_KEEP_TEMPS")) {
    for (size_t t = 0; t < temp_files->count; ++t)
      unlink(temp_files->items[t]);
    if (temp_dir)
      rmdir(temp_dir);
  }
  _exit(EXIT_INTERNAL_ERROR);
}

static void install_crash_handlers(void) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = on_crash;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); ++i)
    sigaction(signals[i], &action, NULL);
}

/* on_diagnostic: the library's diagnostics reach stderr as they are emitted. */
static void print_diagnostic(const char *text, void *user_data) {
  (void)user_data;
  fputs(text, stderr);
  fflush(stderr);
}

static const char *emit_name(HPVMCompileEmit emit) {
  return emit == HPVMCompileEmitHPVM ? "hpvm" : emit == HPVMCompileEmitMLIR ? "mlir" : "llvm";
}

/* The pipeline option `key` of `options` set to `value`; an internal error when the library
 * refuses it. */
static void set_option(HPVMDriverOptions *options, const char *key, const char *value) {
  char *error = NULL;
  if (!hpvmDriverOptionsSet(options, key, value, &error))
    fail_internal("%s", error ? error : key);
}

/* Runs one compiler-library stage in this process, `options` as the pipeline's options;
 * true on success. Its diagnostics (with source locations) go to stderr as they come; -v
 * prints what it did and its duration. */
static bool run_library_stage(const char *stage, const char *input, const char *output,
                              HPVMCompileInput input_kind, HPVMCompileEmit emit,
                              const HPVMDriverOptions *options) {
  double start = seconds();
  char *text = hpvmDriverOptionsString(options);
  char *devices = hpvmDriverOptionsGet(options, "devices");
  if (!text || !devices)
    fail_internal("out of memory%s", "");
  current_stage = stage;
  bool ok = hpvmCompileFileWithOptions(input, output, input_kind, emit, text,
                                       print_diagnostic, NULL, NULL);
  current_stage = NULL;
  if (verbose)
    fprintf(stderr, "hpvm-cc: [%s %.3f s] libHPVMCompiler: %s -> %s (%s%s%s)\n", stage,
            seconds() - start, input, output, emit_name(emit), *devices ? ", devices=" : "",
            devices);
  hpvmCompileFreeText(text);
  hpvmCompileFreeText(devices);
  return ok;
}

/* The tools' directory: bin/ beside the compiler library's lib/ (the build or install tree
 * hpvm-cc and the library belong to). */
static char *tools_dir(void) {
  Dl_info info;
  if (!dladdr((void *)&hpvmDriverMain, &info) || !info.dli_fname)
    return copy(HPVM_CC_TOOLS_DIR);
  char *tree = realpath(info.dli_fname, NULL);
  if (!tree)
    return copy(HPVM_CC_TOOLS_DIR);
  for (int up = 0; up < 2; ++up) {
    char *slash = strrchr(tree, '/');
    if (!slash) {
      free(tree);
      return copy(HPVM_CC_TOOLS_DIR);
    }
    *slash = '\0';
  }
  char *tools = format2(tree, "/bin");
  free(tree);
  return tools;
}

static void usage(void) {
  printf("usage: hpvm-cc [options] inputs...\n"
         "Compiles HPVM programs (.mlir), HPVM-C programs (.c, .cc, .cpp using hpvm.h)\n"
         "and C host code into an executable linked with the HPVM runtime. Other inputs\n"
         "(.o, .a, .so, .ll) are passed to the linker or compiled as they are.\n\n"
         "  -o FILE           output file (default a.out, or NAME.{mlir,ll,o} with --emit)\n"
         "  -O0 -O1 -O2 -O3   optimization level of the generated and C code (default -O2)\n"
         "  --target=KIND     cpu (default); gpu: nodes hinted GPU_TARGET or\n"
         "                    CPU_OR_GPU_TARGET (gpu/spirv targets in .mlir) also get\n"
         "                    CUDA kernels (PTX); opencl: OpenCL kernels (SPIR-V).\n"
         "                    CPU versions are kept: without the device the\n"
         "                    program runs on the CPU\n"
         "  --emit=KIND       stop after: hpvm (HPVM-C raised to the hpvm dialect),\n"
         "                    hpvmc (a Hetero-C++ source lowered to HPVM-C, LLVM IR),\n"
         "                    ptx (--target=gpu) or spirv (--target=opencl): the\n"
         "                    kernels of the one input,\n"
         "                    mlir (llvm dialect), llvm (LLVM IR), obj\n"
         "  -c                the same as --emit=obj: an object per source (NAME.o,\n"
         "                    or -o FILE for one), linked later by hpvm-cc\n"
         "  -I DIR, -D NAME[=VALUE]   C preprocessor options for .c inputs\n"
         "  -L DIR, -l NAME, -Wl,..., -Xlinker ARG   linker options\n"
         "  -Xclang ARG       passed to clang's front end where it compiles a C or C++\n"
         "                    source (-Xclang -disable-lifetime-markers, ...)\n"
         "  -std=STANDARD     the standard of the C sources (default gnu11) or, for a\n"
         "                    C++ one (c++14, gnu++14, ...), of the C++ sources (default\n"
         "                    gnu++17); both may be given\n"
         "  -x c|c++|none     the inputs after it are sources of that language, whatever\n"
         "                    their names (none: by their names, .c C, .cc/.cpp C++)\n"
         "  -f..., -W..., -m..., -g, -w   passed to clang for every compile; the code is\n"
         "                    compiled for this machine (-march=native) unless -march=\n"
         "                    or -mcpu= names another CPU; with -g the code made of\n"
         "                    the nodes gets their source lines too\n"
         "  -fsanitize=LIST   address, thread, leak, undefined (or UBSan's checks):\n"
         "                    host code, leaves and the code made of the graph are\n"
         "                    instrumented, and the runtime linked in is built with\n"
         "                    the same sanitizers (see docs/HPVM-C.md)\n");
  /* The lowering's switches, from the option table (HPVM/Pipelines/Options.def). */
  char *table = hpvmDriverOptionsHelp();
  fputs(table ? table : "", stdout);
  hpvmCompileFreeText(table);
  printf("  -fhetero-sequential   Hetero-C++: remove the markers and call the root where\n"
         "                    it is launched (the program as sequential C++)\n"
         "  -fno-hetero-streaming   Hetero-C++: a launch region in a loop is a launch per\n"
         "                    iteration, never one streaming launch\n"
         "  --knobs=FILE      approximation knobs of the tensor ops, from a JSON\n"
         "                    configuration (see hpvm-apply-knobs in docs/Transforms.md)\n"
         "  --print-pipeline  print the pass pipeline the other options ask for\n"
         "                    (hpvm-lower-to-llvm-pipeline, every pass with its options)\n"
         "                    and stop\n"
         "  -shared           make a shared library (position-independent, with the\n"
         "                    runtime linked in) instead of an executable; its\n"
         "                    functions are called through their C interface\n"
         "                    (_mlir_ciface_NAME), e.g. by the hpvm Python package\n"
         "  -v                print each stage, its command and its time, and\n"
         "                    which leaves were vectorized (and why not)\n"
         "  -h, --help        this text\n\n"
         "HPVM_COMPILE_JOBS=N in the environment: clang compiles a large program's LLVM\n"
         "IR in up to N parts at once (default: one per CPU; 1: whole).\n\n"
         "Exit status: 0 on success, 1 for an error in the program or the command line,\n"
         "70 when a stage crashed or could not run (an internal error).\n");
}

typedef enum {
  EMIT_EXECUTABLE,
  EMIT_HPVM,
  EMIT_HPVMC,
  EMIT_MLIR,
  EMIT_LLVM,
  EMIT_OBJECT,
  EMIT_KERNELS
} emit_t;

/* True when the bitcode `bc` holds `name` or `other` (NULL: none). Bitcode keeps symbol names
 * as raw bytes in its string table: a name of an API there means the module declares (calls)
 * it. */
static bool mentions_either(const char *bc, const char *name, const char *other) {
  FILE *file = fopen(bc, "rb");
  if (!file)
    return false;
  const char *const names[] = {name, other ? other : name};
  char buffer[65536 + 16];
  size_t kept = 0, got;
  bool found = false;
  while (!found && (got = fread(buffer + kept, 1, sizeof(buffer) - kept, file)) > 0) {
    size_t size = kept + got;
    for (size_t n = 0; !found && n < 2; ++n)
      found = memmem(buffer, size, names[n], strlen(names[n])) != NULL;
    /* A name may straddle two reads. */
    kept = size < 16 ? size : 16;
    memmove(buffer, buffer + size - kept, kept);
  }
  fclose(file);
  return found;
}

/* True when the LLVM IR clang made of a C input calls the HPVM-C API. A false positive only
 * costs the library's import of a plain file, which is then lowered as it is. */
static bool uses_hpvm_c(const char *bc) { return mentions_either(bc, "__hpvm__", "llvm_hpvm_"); }

/* Flags that instrument code and must also be given to the link. */
static bool is_instrumentation(const char *flag) {
  return strncmp(flag, "-fsanitize", 10) == 0 || strncmp(flag, "-fprofile", 9) == 0 ||
         strncmp(flag, "-fcoverage", 10) == 0 || strncmp(flag, "-fno-sanitize", 13) == 0;
}

/* Copies file `from` to `to`; false (with a message) on failure. */
static bool copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in)
    return false;
  FILE *out = fopen(to, "wb");
  if (!out) {
    fclose(in);
    fprintf(stderr, "hpvm-cc: error: cannot write '%s'\n", to);
    return false;
  }
  char buffer[65536];
  size_t count;
  bool ok = true;
  while ((count = fread(buffer, 1, sizeof buffer, in)) > 0)
    ok &= fwrite(buffer, 1, count, out) == count;
  ok &= !ferror(in);
  fclose(in);
  ok &= fclose(out) == 0;
  if (!ok)
    fprintf(stderr, "hpvm-cc: error: cannot copy '%s' to '%s'\n", from, to);
  return ok;
}


/* The driver's state: what the command line asks for, then the files each phase makes. */
typedef struct {
  /* -o FILE (NULL: the default name), the -O level. */
  const char *output, *opt;
  /* The device kernels are built for (--target=): NULL (CPU only), "cuda" or "opencl". */
  const char *device;
  /* The lowering's options: the option table's flags (HPVM/Pipelines/Options.def), --target=
   * and --knobs=, read by the compiler library; then -v, -g, -march= and -fsanitize=. */
  HPVMDriverOptions *options;
  /* --print-pipeline: print the pipeline the options build, and stop. */
  bool print_pipeline;
  emit_t emit;
  /* With EMIT_KERNELS: "ptx" or "spirv". */
  const char *emit_kind;
  list_t mlir_inputs, c_inputs, ll_inputs, link_inputs;
  list_t preprocessor, linker, codegen;
  /* -Xclang ARG, each as a pair: for clang's compiles of the C and C++ sources. */
  list_t frontend;
  /* -x LANGUAGE: "c" or "c++" for the inputs after it (NULL, -x none: by their names); the
   * inputs it named, each with its language. */
  const char *language;
  list_t language_inputs, languages;
  /* -std=: the standard of the C sources and of the C++ sources (NULL: gnu11, gnu++17). */
  const char *c_standard, *cxx_standard;
  /* -DDEVICE given; some input is C++ (the link adds libstdc++). */
  bool device_defined, cxx;
  /* -shared: a shared library (position-independent code, the runtime linked in) that a
   * program or Python (the hpvm package) loads; its functions keep their C interface. */
  bool shared;
  /* -march=native unless the command line names a CPU, so that a portable build
   * (-march=x86-64) can be compared with one for this machine. */
  bool cpu_chosen;
  /* -g: line tables for the code the lowering makes of the nodes too. */
  bool debug_info;
  /* Whether the vector width of the CPU -march= or -mcpu= names was asked of clang. */
  bool vector_bits_known;
  /* -fhetero-sequential: Hetero-C++ markers removed, launches plain calls of the root (the
   * program as sequential C++: its native build). */
  bool hetero_sequential;
  /* -fno-hetero-streaming: a launch region in a loop stays a launch per iteration. */
  bool hetero_streaming;
  /* The sanitizers -fsanitize= asks for (sanitizer_t bits, after every -fno-sanitize=). */
  unsigned sanitizers;
  /* The runtime library the link adds. */
  const char *runtime_lib;
  /* How many clang processes compile the parts of a program's LLVM IR at once
   * ($HPVM_COMPILE_JOBS, else the CPUs this process may run on). */
  unsigned jobs;
  /* The temporary directory, the files to remove from it, and the objects to link. */
  char *temp;
  list_t temporaries, objects;
  /* The HPVM programs the library compiles: .mlir inputs, and clang's LLVM IR
   * of HPVM-C sources, each with the source it came from (which names its
   * outputs and its diagnostics). */
  list_t programs, program_sources;
} driver_t;

/* The language source `input` is compiled as: the -x before it, else by its name. */
static const char *given_language(const driver_t *d, const char *input) {
  for (size_t i = d->language_inputs.count; i-- > 0;)
    if (strcmp(d->language_inputs.items[i], input) == 0)
      return d->languages.items[i];
  return NULL;
}

static bool is_cxx(const driver_t *d, const char *input) {
  const char *language = given_language(d, input);
  if (language)
    return strcmp(language, "c++") == 0;
  return ends_with(input, ".cc") || ends_with(input, ".cpp");
}

/* clang's flags that choose how it reads source `input`: its language where -x gave one, and
 * its standard (-std= for its language, else gnu11 and gnu++17). */
static void push_language(const driver_t *d, list_t *command, const char *input) {
  bool cxx = is_cxx(d, input);
  const char *standard = cxx ? d->cxx_standard : d->c_standard;
  char *flag = format2("-std=", standard ? standard : cxx ? "gnu++17" : "gnu11");
  push(command, flag);
  free(flag);
  if (given_language(d, input)) {
    push(command, "-x");
    push(command, cxx ? "c++" : "c");
  }
}

/* What hpvm-cc does for each kind of sanitizer. AddressSanitizer and ThreadSanitizer are LLVM
 * passes that instrument the functions clang marked for them: the lowering marks every function
 * of the program (hpvm-sanitize-functions) and the final compile instruments them. UBSan's checks
 * are made by clang's front end, so they go to the compile of HPVM-C sources that the library
 * imports, and leaves keep them. The runtime linked in is compiled with the same sanitizers. */
typedef enum {
  SANITIZE_ADDRESS = 1,
  SANITIZE_THREAD = 2,
  SANITIZE_LEAK = 4,      /* LeakSanitizer alone: no instrumentation, a runtime library */
  SANITIZE_UNDEFINED = 8, /* any check of UBSan's (undefined, signed-integer-overflow, ...) */
  SANITIZE_COVERAGE = 16, /* fuzzer, fuzzer-no-link: coverage of the final compile only */
  SANITIZE_UNSUPPORTED = 32,
} sanitizer_t;

/* The kind of the sanitizer `name` (`length` bytes) of a -fsanitize= list. */
static sanitizer_t sanitizer_kind(const char *name, size_t length) {
  static const struct {
    const char *name;
    sanitizer_t kind;
  } known[] = {
      {"address", SANITIZE_ADDRESS},        {"thread", SANITIZE_THREAD},
      {"leak", SANITIZE_LEAK},              {"fuzzer", SANITIZE_COVERAGE},
      {"fuzzer-no-link", SANITIZE_COVERAGE}, {"memory", SANITIZE_UNSUPPORTED},
      {"hwaddress", SANITIZE_UNSUPPORTED},  {"kernel-address", SANITIZE_UNSUPPORTED},
      {"kernel-hwaddress", SANITIZE_UNSUPPORTED}, {"kernel-memory", SANITIZE_UNSUPPORTED},
      {"dataflow", SANITIZE_UNSUPPORTED},   {"safe-stack", SANITIZE_UNSUPPORTED},
      {"shadow-call-stack", SANITIZE_UNSUPPORTED}, {"kcfi", SANITIZE_UNSUPPORTED},
      {"scudo", SANITIZE_UNSUPPORTED},      {"type", SANITIZE_UNSUPPORTED},
      {"realtime", SANITIZE_UNSUPPORTED},   {"numerical", SANITIZE_UNSUPPORTED},
      {"memtag", SANITIZE_UNSUPPORTED},     {"memtag-stack", SANITIZE_UNSUPPORTED},
      {"memtag-heap", SANITIZE_UNSUPPORTED}, {"memtag-globals", SANITIZE_UNSUPPORTED},
      {"all", SANITIZE_ADDRESS | SANITIZE_THREAD | SANITIZE_LEAK | SANITIZE_UNDEFINED |
                  SANITIZE_COVERAGE},
  };
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); ++i)
    if (strlen(known[i].name) == length && strncmp(known[i].name, name, length) == 0)
      return known[i].kind;
  if (length >= 3 && strncmp(name, "cfi", 3) == 0)
    return SANITIZE_UNSUPPORTED;
  /* Anything else is one of UBSan's checks or groups; clang refuses a name that is none. */
  return SANITIZE_UNDEFINED;
}

/* -fsanitize=LIST and -fno-sanitize=LIST: the sanitizers `d` asks for after `flag`; a sanitizer
 * hpvm-cc cannot give the program is an error (the runtime and the lowering support address,
 * thread, leak, UBSan's checks and fuzzer coverage). */
static void note_sanitizers(driver_t *d, const char *flag) {
  bool on = strncmp(flag, "-fsanitize=", 11) == 0;
  if (!on && strncmp(flag, "-fno-sanitize=", 14) != 0)
    return;
  for (const char *name = strchr(flag, '=') + 1; *name;) {
    size_t length = strcspn(name, ",");
    sanitizer_t kind = sanitizer_kind(name, length);
    if (on && kind == SANITIZE_UNSUPPORTED) {
      char message[512];
      snprintf(message, sizeof message,
               "'%.200s': hpvm-cc cannot build a program with -fsanitize=%.*s; expected "
               "address, thread, leak, undefined (or UBSan's checks) or fuzzer",
               flag, (int)(length < 100 ? length : 100), name);
      fail("%s", message);
    }
    if (kind != SANITIZE_UNSUPPORTED)
      d->sanitizers = on ? d->sanitizers | kind : d->sanitizers & ~kind;
    name += length + (name[length] == ',');
  }
  if ((d->sanitizers & SANITIZE_ADDRESS) && (d->sanitizers & SANITIZE_THREAD))
    fail("'%s': -fsanitize=address and -fsanitize=thread cannot be combined; build the "
         "program once with each",
         flag);
}

/* `flag`, one of the instrumentation flags, as the compile of an HPVM-C source for the library
 * takes it (NULL: not at all): UBSan's checks of -fsanitize= and -fno-sanitize= lists, and the
 * options of UBSan's reports; the other sanitizers and profiling instrument the final compile. */
static char *frontend_instrumentation(const driver_t *d, const char *flag) {
  bool on = strncmp(flag, "-fsanitize=", 11) == 0;
  bool off = strncmp(flag, "-fno-sanitize=", 14) == 0;
  if (!(d->sanitizers & SANITIZE_UNDEFINED))
    return NULL;
  if (!on && !off) {
    const char *kept[] = {"-fsanitize-recover", "-fno-sanitize-recover", "-fsanitize-trap",
                          "-fno-sanitize-trap", "-fsanitize-ignorelist",
                          "-fsanitize-minimal-runtime"};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); ++i)
      if (strncmp(flag, kept[i], strlen(kept[i])) == 0)
        return copy(flag);
    return NULL;
  }
  /* The list, less the sanitizers the front end must not apply. */
  const char *list = strchr(flag, '=') + 1;
  size_t size = strlen(flag) + 1;
  char *result = malloc(size);
  if (!result)
    fail_internal("out of memory%s", "");
  size_t at = (size_t)(list - flag);
  memcpy(result, flag, at);
  bool any = false;
  for (const char *name = list; *name;) {
    size_t length = strcspn(name, ",");
    if (sanitizer_kind(name, length) == SANITIZE_UNDEFINED ||
        (off && length == 3 && strncmp(name, "all", 3) == 0)) {
      if (any)
        result[at++] = ',';
      memcpy(result + at, name, length);
      at += length;
      any = true;
    }
    name += length + (name[length] == ',');
  }
  result[at] = '\0';
  if (!any) {
    free(result);
    return NULL;
  }
  return result;
}

/* The runtime library the program links: the one compiled with the program's sanitizers
 * (libhpvm_rt_asan.a, _tsan.a, _ubsan.a beside libhpvm_rt.a), else libhpvm_rt.a. */
static const char *runtime_library(const driver_t *d) {
  const char *variant = (d->sanitizers & SANITIZE_ADDRESS)     ? "asan"
                        : (d->sanitizers & SANITIZE_THREAD)    ? "tsan"
                        : (d->sanitizers & SANITIZE_UNDEFINED) ? "ubsan"
                                                               : NULL;
  if (!variant)
    return d->runtime_lib;
  const char *slash = strrchr(d->runtime_lib, '/');
  size_t directory = slash ? (size_t)(slash - d->runtime_lib) + 1 : 0;
  size_t size = directory + strlen("libhpvm_rt_.a") + strlen(variant) + 1;
  char *library = malloc(size);
  if (!library)
    fail_internal("out of memory%s", "");
  snprintf(library, size, "%.*slibhpvm_rt_%s.a", (int)directory, d->runtime_lib, variant);
  if (access(library, R_OK) != 0) {
    char message[1024];
    snprintf(message, sizeof message,
             "-fsanitize needs the HPVM runtime compiled with the same sanitizers, '%.900s', "
             "which is missing (it is built with clang when "
             "HPVM_RUNTIME_BUILD_SANITIZER_VARIANTS is on)",
             library);
    fail("%s", message);
  }
  return library;
}

/* The value of an option that takes one (-o, -I, -D, -L, -l): attached (-Ifoo) or the next
 * argument, which `*i` then moves past; NULL for other arguments (and for -oFILE). */
static const char *option_value(int argc, char **argv, int *i) {
  const char *arg = argv[*i];
  if ((arg[0] == '-' && strchr("oIDLl", arg[1]) && arg[1] != '\0') && arg[2] == '\0') {
    if (*i + 1 >= argc)
      fail("option '%s' expects a value", arg);
    return argv[++*i];
  }
  if (arg[0] == '-' && strchr("IDLl", arg[1]) && arg[1] != '\0')
    return arg + 2;
  return NULL;
}

/* The driver's own options (-v, -shared, -c, -o, -O, --emit=, --print-pipeline);
 * false when `arg` is none of them. */
static bool parse_driver_option(driver_t *d, const char *arg, const char *value) {
  if (strcmp(arg, "-v") == 0) {
    verbose = true;
  } else if (strcmp(arg, "-shared") == 0) {
    d->shared = true;
  } else if (strcmp(arg, "-c") == 0) {
    d->emit = EMIT_OBJECT; /* as --emit=obj, the way build systems ask for objects */
  } else if (arg[0] == '-' && arg[1] == 'o') {
    d->output = value ? value : arg + 2;
  } else if (arg[0] == '-' && arg[1] == 'O') {
    if (strlen(arg) != 3 || arg[2] < '0' || arg[2] > '3')
      fail("unknown optimization level '%s'; expected -O0, -O1, -O2 or -O3", arg);
    d->opt = arg;
  } else if (strcmp(arg, "--print-pipeline") == 0) {
    d->print_pipeline = true;
  } else if (strncmp(arg, "--emit=", 7) == 0) {
    const char *kind = arg + 7;
    if (strcmp(kind, "hpvm") == 0)
      d->emit = EMIT_HPVM;
    else if (strcmp(kind, "hpvmc") == 0)
      d->emit = EMIT_HPVMC;
    else if (strcmp(kind, "mlir") == 0)
      d->emit = EMIT_MLIR;
    else if (strcmp(kind, "llvm") == 0)
      d->emit = EMIT_LLVM;
    else if (strcmp(kind, "obj") == 0)
      d->emit = EMIT_OBJECT;
    else if (strcmp(kind, "ptx") == 0 || strcmp(kind, "spirv") == 0)
      d->emit = EMIT_KERNELS, d->emit_kind = kind;
    else
      fail("unknown --emit kind '%s'; expected hpvm, hpvmc, mlir, llvm, obj, ptx or spirv",
           kind);
  } else {
    return false;
  }
  return true;
}

/* -x LANGUAGE (`text`): how the inputs after it are compiled. */
static void set_language(driver_t *d, const char *text) {
  if (strcmp(text, "c") == 0 || strcmp(text, "c++") == 0)
    d->language = strcmp(text, "c") == 0 ? "c" : "c++";
  else if (strcmp(text, "none") == 0)
    d->language = NULL;
  else
    fail("-x expects the language of the inputs after it, c, c++ or none (by their names); "
         "found '%s'", text);
}

/* -std=STANDARD (`text`): the standard of the C sources or, for a C++ standard (c++17,
 * gnu++14, ...), of the C++ sources; clang checks the rest of the name. */
static void set_standard(driver_t *d, const char *text) {
  if (strstr(text, "++"))
    d->cxx_standard = text;
  else if (text[0] == 'c' || strncmp(text, "gnu", 3) == 0 || strncmp(text, "iso9899:", 8) == 0)
    d->c_standard = text;
  else
    fail("-std= expects a language standard, of C (c11, gnu17, ...) or of C++ (c++17, "
         "gnu++14, ...); found '%s'", text);
}

/* The options of the preprocessor (-I, -D), of the linker (-L, -l, -Wl,..., -Xlinker ARG) and
 * of clang's front end (-Xclang ARG; for both, `*i` moves past ARG); false when `arg` is none
 * of them. */
static bool parse_tool_option(driver_t *d, const char *arg, const char *value, int argc,
                              char **argv, int *i) {
  if (arg[0] == '-' && (arg[1] == 'I' || arg[1] == 'D')) {
    if (arg[1] == 'D' && strncmp(value, "DEVICE", 6) == 0 &&
        (value[6] == '\0' || value[6] == '='))
      d->device_defined = true;
    push(&d->preprocessor, arg[1] == 'I' ? "-I" : "-D");
    push(&d->preprocessor, value);
  } else if (arg[0] == '-' && arg[1] == 'L') {
    push(&d->linker, "-L");
    push(&d->linker, value);
  } else if (arg[0] == '-' && arg[1] == 'l') {
    char *flag = format2("-l", value);
    push(&d->linker, flag);
    free(flag);
  } else if (strncmp(arg, "-Wl,", 4) == 0) {
    /* For the link only (it is not a warning flag: clang's compiles would warn that the
     * linker input is unused, and the link would never see it). */
    push(&d->linker, arg);
  } else if (strcmp(arg, "-x") == 0) {
    if (*i + 1 >= argc)
      fail("option '%s' expects a value: c, c++ or none", arg);
    set_language(d, argv[++*i]);
  } else if (strncmp(arg, "-x", 2) == 0 && arg[2] != '\0') {
    set_language(d, arg + 2); /* -xc++, as clang takes it */
  } else if (strncmp(arg, "-std=", 5) == 0) {
    set_standard(d, arg + 5);
  } else if (strcmp(arg, "-Xlinker") == 0 || strcmp(arg, "-Xclang") == 0) {
    if (*i + 1 >= argc)
      fail("option '%s' expects a value", arg);
    list_t *list = arg[2] == 'l' ? &d->linker : &d->frontend;
    push(list, arg);
    push(list, argv[++*i]);
  } else {
    return false;
  }
  return true;
}

/* The lowering's flags (the option table's -f[no-]hpvm-... switches, -fhpvm-lanes=N, ...,
 * --target=, --knobs=: the compiler library reads them), the Hetero-C++ switches, then the
 * code generation and warning flags (-f..., -W..., -m..., -g, -w); false when `arg` is none. */
static bool parse_codegen_option(driver_t *d, const char *arg) {
  char *error = NULL;
  int taken = hpvmDriverOptionsTake(d->options, arg, &error);
  if (taken < 0)
    fail("%s", error ? error : arg);
  if (taken > 0 || parse_switch(arg, "hetero-sequential", &d->hetero_sequential) ||
      parse_switch(arg, "hetero-streaming", &d->hetero_streaming)) {
    /* set */
  } else if (arg[0] == '-' && (arg[1] == 'f' || arg[1] == 'W' || arg[1] == 'm' ||
                               strcmp(arg, "-g") == 0 || strcmp(arg, "-w") == 0)) {
    /* Code generation and warning flags go to every clang compile. */
    if (strncmp(arg, "-march=", 7) == 0 || strncmp(arg, "-mcpu=", 6) == 0)
      d->cpu_chosen = true;
    d->debug_info = d->debug_info || strcmp(arg, "-g") == 0;
    note_sanitizers(d, arg);
    push(&d->codegen, arg);
  } else {
    return false;
  }
  return true;
}

/* An input file, sorted by its kind: .mlir, C or C++, LLVM IR, or else for the linker. */
static void add_input(driver_t *d, const char *arg) {
  struct stat info;
  if (stat(arg, &info) != 0)
    fail("no such file: '%s'", arg);
  if (d->language) {
    /* After -x c or -x c++, as clang: a source of that language, whatever its name. */
    push(&d->c_inputs, arg);
    push(&d->language_inputs, arg);
    push(&d->languages, d->language);
  } else if (ends_with(arg, ".mlir"))
    push(&d->mlir_inputs, arg);
  else if (ends_with(arg, ".c") || ends_with(arg, ".cc") || ends_with(arg, ".cpp"))
    push(&d->c_inputs, arg);
  else if (ends_with(arg, ".ll") || ends_with(arg, ".bc"))
    push(&d->ll_inputs, arg);
  else
    push(&d->link_inputs, arg);
}

/* Reads the command line into `d`; false when it asked for the help text (then printed). */
static bool parse_command_line(driver_t *d, int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    /* Options taking a value accept it attached (-Ifoo) or as the next argument. */
    const char *value = option_value(argc, argv, &i);
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      usage();
      return false;
    }
    if (arg[0] != '-')
      add_input(d, arg);
    else if (!parse_driver_option(d, arg, value) &&
             !parse_tool_option(d, arg, value, argc, argv, &i) &&
             !parse_codegen_option(d, arg))
      fail("unknown option '%s' (see hpvm-cc --help)", arg);
  }
  return true;
}

/* The checks of the command line as a whole: inputs, the output, --emit against them. */
static void check_command_line(const driver_t *d) {
  size_t sources = d->mlir_inputs.count + d->c_inputs.count + d->ll_inputs.count;
  if (sources + d->link_inputs.count == 0)
    fail("no input files%s", "");
  if (d->emit != EMIT_EXECUTABLE && d->output && sources != 1)
    fail("-o with -c or --emit needs exactly one source input, found %s",
         sources == 0 ? "none" : "several");
  /* As gcc: an output that is one of the inputs would be overwritten. */
  struct stat out_info;
  if (d->output && stat(d->output, &out_info) == 0) {
    const list_t *lists[] = {&d->mlir_inputs, &d->c_inputs, &d->ll_inputs, &d->link_inputs};
    for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); ++l)
      for (size_t i = 0; i < lists[l]->count; ++i) {
        struct stat in_info;
        if (stat(lists[l]->items[i], &in_info) == 0 && in_info.st_dev == out_info.st_dev &&
            in_info.st_ino == out_info.st_ino)
          fail("input file '%s' is the same as the output file; expected another -o",
               lists[l]->items[i]);
      }
  }
  if (d->emit == EMIT_KERNELS) {
    const char *wanted = strcmp(d->emit_kind, "ptx") == 0 ? "cuda" : "opencl";
    if (!d->device || strcmp(d->device, wanted) != 0)
      fail("--emit=%s needs --target=gpu (ptx) or --target=opencl (spirv) to match",
           d->emit_kind);
    if (sources != 1 || d->ll_inputs.count)
      fail("--emit=%s needs exactly one .mlir or HPVM-C input", d->emit_kind);
  }
  if ((d->emit == EMIT_HPVM || d->emit == EMIT_HPVMC) &&
      (d->mlir_inputs.count || d->ll_inputs.count))
    fail("--emit=hpvm and hpvmc apply to C and C++ sources; drop '%s'",
         d->mlir_inputs.count ? d->mlir_inputs.items[0] : d->ll_inputs.items[0]);
}

/* A -std= for a language no input is compiled as: a warning (a .c file meant as C++ needs
 * -x c++ before it). */
static void check_standards(const driver_t *d) {
  bool c = false, cxx = false;
  for (size_t i = 0; i < d->c_inputs.count; ++i) {
    bool one = is_cxx(d, d->c_inputs.items[i]);
    cxx = cxx || one;
    c = c || !one;
  }
  if (d->cxx_standard && !cxx)
    fprintf(stderr, "hpvm-cc: warning: -std=%s is a C++ standard, and no input is compiled as "
            "C++ (a .c file is after -x c++)\n", d->cxx_standard);
  if (d->c_standard && !c)
    fprintf(stderr, "hpvm-cc: warning: -std=%s is a C standard, and no input is compiled as "
            "C\n", d->c_standard);
}

/* Finds the runtime: its headers for the preprocessor, and its library for the link. */
static void find_runtime(driver_t *d) {
  /* hpvm.h (with the runtime's headers): <hpvm/hpvm.h> as in this project, "hpvm.h" as in
   * the release; from an installed tree (bin/../include) or else the source tree. */
  char *tools = tools_dir();
  char *installed = format2(tools, "/../include");
  char *installed_header = format2(installed, "/hpvm/hpvm.h");
  bool is_installed = access(installed_header, R_OK) == 0;
  const char *include = is_installed ? installed : HPVM_CC_INCLUDE;
  /* The runtime library likewise: the installed one next to the installed header. */
  d->runtime_lib = is_installed ? format2(tools, "/../lib/libhpvm_rt.a") : HPVM_CC_RUNTIME_LIB;
  push(&d->preprocessor, "-I");
  push(&d->preprocessor, include);
  push(&d->preprocessor, "-I");
  push(&d->preprocessor, format2(include, "/hpvm"));
  /* ApproxHPVM's host API (tensorUtils.h, config.h, ...) after the program's own headers. */
  push(&d->preprocessor, "-idirafter");
  push(&d->preprocessor, format2(include, "/hpvm/approxhpvm"));
  /* Unqualified in C++ too: the release's tensor.h declares `enum { HOST, DEVICE }`, which
   * must stay an enumerator's name (hetero.h brings the targets into the global scope). */
  if (!d->device_defined)
    push(&d->preprocessor, "-DDEVICE=CPU_TARGET");
}

/* Creates the temporary directory and installs the crash handlers that remove it. */
static void make_temp_dir(driver_t *d) {
  const char *temp_root = getenv("TMPDIR");
  char *temp_template =
      format2(temp_root && *temp_root ? temp_root : "/tmp", "/hpvm-cc-XXXXXX");
  d->temp = mkdtemp(temp_template);
  if (!d->temp && temp_root && *temp_root) {
    /* The user's TMPDIR (missing, not a folder, not writable): an error of the user's. */
    char message[4096];
    snprintf(message, sizeof message,
             "cannot create a temporary directory in TMPDIR '%s': %s; expected an existing, "
             "writable folder (or TMPDIR unset, for /tmp)",
             temp_root, strerror(errno));
    fail("%s", message);
  }
  if (!d->temp)
    fail_internal("cannot create a temporary directory: %s", strerror(errno));
  temp_dir = d->temp;
  temp_files = &d->temporaries;
  if (catch_crashes)
    install_crash_handlers();
}

/* The optimization of the LLVM IR the library imports: clang's at the user's level, at least
 * -O1, without vectorizing or unrolling (the final compile's decisions). */
static void push_optimization(const driver_t *d, list_t *list) {
  list_t command = *list;
  /* The user's level, at least -O1 (values in registers: node handles and
   * ports are SSA values for the raising). At a lower level than the final
   * compile's, the leaf arrives there half-optimized (arrays SROA could not
   * split after late unrolling, ...) and the final -O3 never recovers it: a
   * D3Q19 lbm leaf ran 1.6x slower than the same C compiled once at -O3. */
  push(&command, strcmp(d->opt, "-O0") == 0 ? "-O1" : d->opt);
  /* No -march here: the compiler library drops the CPU clang pins on each
   * function, and the final compile chooses it. (With -march=native here too,
   * the release-style D3Q19 lbm ran 1.3-1.5x slower; not investigated.) */
  /* No vectorizing yet: a leaf's instances become a loop only when the graph
   * is lowered, and the final compile vectorizes that loop (or the leaf's
   * own loops) knowing the target; vector code made here would be packed
   * before the instance loop exists. */
  push(&command, "-fno-vectorize");
  push(&command, "-fno-slp-vectorize");
  /* Without it, clang -O1 marks every loop llvm.loop.unroll.disable, and the
   * mark would outlive this step: the final compile could never unroll a
   * leaf's loops. Unrolling is the final compile's decision. */
  push(&command, "-funroll-loops");
  push(&command, "-mllvm");
  push(&command, "-unroll-runtime=false");
  *list = command;
}

/* The Hetero-C++ markers declared first in a C++ source (a system header), so that a
 * program's own declarations of them without noexcept, as HPVM 2.x's heterocc.h has them,
 * are redeclarations that clang accepts, before or after hetero.h. */
static void push_marker_declarations(const driver_t *d, list_t *command, const char *input) {
  if (is_cxx(d, input)) {
    push(command, "-include");
    push(command, "hpvm/hetero_markers.h");
  }
}

/* The clang command that compiles HPVM-C source `input` to LLVM IR (bitcode `bc`) for the
 * library to import. */
static list_t hpvm_c_command(const driver_t *d, const char *input, const char *bc) {
  list_t command = {0};
  push(&command, HPVM_CC_CLANG);
  push_optimization(d, &command);
  push(&command, "-g");
  push(&command, "-fno-discard-value-names");
  push(&command, "-Wno-return-type");
  if (is_cxx(d, input)) {
    push(&command, "-fno-strict-return"); /* node functions end without return */
    /* DWARF 5 describes static data members (std::integral_constant::value in
     * <vector>, ...) as DW_TAG_variable, whose static-member flag the MLIR
     * import drops, and the LLVM verifier then rejects the exported module;
     * DWARF 4 describes them as members. */
    push(&command, "-gdwarf-4");
  }
  append(&command, &d->preprocessor);
  push_marker_declarations(d, &command, input);
  /* Instrumentation (sanitizers, profiling) applies when the lowered program
   * is compiled, not to the IR the frontend imports; but UBSan's checks are
   * made here, by clang's front end (frontend_instrumentation). */
  for (size_t f = 0; f < d->codegen.count; ++f) {
    const char *flag = d->codegen.items[f];
    if (!is_instrumentation(flag)) {
      push(&command, flag);
    } else {
      char *kept = frontend_instrumentation(d, flag);
      if (kept)
        push(&command, kept);
      free(kept);
    }
  }
  append(&command, &d->frontend);
  /* C++ node functions end without a return (-fno-strict-return above): not UB to report. */
  if (is_cxx(d, input) && (d->sanitizers & SANITIZE_UNDEFINED))
    push(&command, "-fno-sanitize=return");
  push(&command, "-c");
  push(&command, "-emit-llvm");
  push_language(d, &command, input); /* -x last: it applies to the inputs after it */
  push(&command, input);
  push(&command, "-o");
  push(&command, bc);
  return command;
}

/* Hetero-C++ sources `inputs` of one program, which clang compiled to LLVM IR: compiled again
 * without optimization (the marked regions still where the source put them), linked into one
 * module when there are several (a graph defined in one file and launched from another: the
 * lowering outlines a root where it is launched), lowered to HPVM-C by the library, and
 * optimized by clang into `bc`, as if the source had been HPVM-C. --emit=hpvmc stops after the
 * lowering, writing LLVM IR text. */
static bool lower_hetero_cxx(driver_t *d, const list_t *inputs, const char *base,
                             const char *bc) {
  char *raw = format2(base, ".hetero.bc");
  list_t link = {0};
  push(&link, HPVM_CC_LLVM_LINK);
  for (size_t i = 0; i < inputs->count; ++i) {
    char index[32];
    snprintf(index, sizeof index, ".%zu.hetero.bc", i);
    char *one = inputs->count == 1 ? copy(raw) : format2(base, index);
    list_t command = hpvm_c_command(d, inputs->items[i], one);
    push(&command, "-Xclang");
    push(&command, "-disable-llvm-passes");
    push(&d->temporaries, one);
    if (!run_stage("compile Hetero-C++ to LLVM IR", &command))
      return false;
    push(&link, one);
  }
  if (inputs->count > 1) {
    if (!*HPVM_CC_LLVM_LINK)
      fail("several Hetero-C++ sources are linked into one program by llvm-link, which was "
           "not found next to clang (%s)", HPVM_CC_CLANG);
    push(&link, "-o");
    push(&link, raw);
    push(&d->temporaries, raw);
    if (!run_stage("link the Hetero-C++ sources", &link))
      return false;
  }
  const char *input = inputs->items[0];
  char *lowered = d->emit != EMIT_HPVMC ? format2(base, ".hpvmc0.bc")
                  : d->output           ? copy(d->output)
                                        : format2(stem(input), ".hpvmc.ll");
  double start = seconds();
  char *diagnostics = NULL;
  current_stage = "lower Hetero-C++";
  unsigned flags = (d->hetero_sequential ? HPVMHeteroCxxSequential : 0) |
                   (d->hetero_streaming ? 0 : HPVMHeteroCxxNoStreaming);
  bool ok = hpvmLowerHeteroCxxFile(raw, lowered, flags, &diagnostics);
  current_stage = NULL;
  if (diagnostics) {
    fputs(diagnostics, stderr);
    hpvmCompileFreeText(diagnostics);
  }
  if (verbose)
    fprintf(stderr, "hpvm-cc: [lower Hetero-C++ %.3f s] libHPVMCompiler: %s -> %s\n",
            seconds() - start, raw, lowered);
  if (!ok || d->emit == EMIT_HPVMC)
    return ok;
  push(&d->temporaries, lowered);
  list_t optimize = {0};
  push(&optimize, HPVM_CC_CLANG);
  push_optimization(d, &optimize);
  push(&optimize, "-Wno-unused-command-line-argument");
  push(&optimize, "-c");
  push(&optimize, "-emit-llvm");
  push(&optimize, lowered);
  push(&optimize, "-o");
  push(&optimize, bc);
  return run_stage("optimize HPVM-C", &optimize);
}

/* The frontend. The HPVM programs: .mlir inputs as they are. C: HPVM-C sources are compiled
 * by clang (the -O level, at least -O1, and debug locations); the library imports their LLVM
 * IR into MLIR and raises it to the hpvm dialect (--emit=hpvm stops there), then lowers it as
 * it lowers .mlir inputs. Other C sources are compiled as they are, by compile_objects. */
/* The steps after clang compiled C source `input` to LLVM IR `bc` (and, with `hetero`, lowered
 * it from Hetero-C++): a program for the library, plain LLVM IR, or host code for
 * compile_objects (`host_inputs`). */
static bool take_c_program(driver_t *d, const char *input, const char *bc, bool hetero,
                           list_t *host_inputs) {
  d->cxx = d->cxx || is_cxx(d, input);
  if (hetero && !uses_hpvm_c(bc) && d->emit != EMIT_HPVM) {
    /* Sequential (-fhetero-sequential): plain LLVM IR, compiled as it is. */
    push(&d->ll_inputs, bc);
    return true;
  }
  if (!uses_hpvm_c(bc)) {
    if (d->emit == EMIT_HPVM)
      fail("--emit=hpvm: '%s' does not use the HPVM-C API", input);
    push(host_inputs, input);
    return true;
  }
  if (d->emit == EMIT_HPVM) {
    char *name = stem(input);
    char *raised = d->output ? copy(d->output) : format2(name, ".hpvm.mlir");
    bool ok = run_library_stage("raise HPVM-C", bc, raised, HPVMCompileInputHPVMC,
                                HPVMCompileEmitHPVM, d->options);
    free(raised);
    free(name);
    return ok;
  }
  /* Imported, raised and lowered by run_lowering, in one library call. */
  push(&d->programs, bc);
  push(&d->program_sources, input);
  return true;
}

static bool run_frontend(driver_t *d) {
  for (size_t i = 0; i < d->mlir_inputs.count; ++i) {
    push(&d->programs, d->mlir_inputs.items[i]);
    push(&d->program_sources, d->mlir_inputs.items[i]);
  }
  list_t host_inputs = {0}, bcs = {0}, hetero_inputs = {0};
  bool ok = true;
  /* Each source to LLVM IR first: which ones are Hetero-C++ decides how they are lowered. */
  bool *hetero = calloc(d->c_inputs.count + 1, sizeof(bool));
  if (!hetero)
    fail_internal("out of memory%s", "");
  for (size_t i = 0; ok && i < d->c_inputs.count; ++i) {
    const char *input = d->c_inputs.items[i];
    /* Bitcode, not text: value names need not survive a print and a parse
     * (LLVM cuts local names at 1024 bytes, and the release's resnet50 main has
     * longer ones, which then collide when text is parsed back). */
    char *bc = format2(d->temp, format2("/", format2(stem(input), ".hpvmc.bc")));
    list_t command = hpvm_c_command(d, input, bc);
    push(&d->temporaries, bc);
    push(&bcs, bc);
    ok = run_stage("compile C to LLVM IR", &command);
    /* Hetero-C++'s markers, or HPVM 2.x's earlier spellings (__hpvm_launch, ...). */
    hetero[i] = ok && mentions_either(bc, "__hetero_", "__hpvm_launch");
    if (hetero[i])
      push(&hetero_inputs, input);
  }
  /* The Hetero-C++ sources of an executable or a library are one program: a graph may be
   * launched from another file than its own. */
  bool whole_program = d->emit == EMIT_EXECUTABLE && hetero_inputs.count > 1;
  for (size_t i = 0; ok && i < d->c_inputs.count; ++i) {
    const char *input = d->c_inputs.items[i];
    const char *bc = bcs.items[i];
    if (hetero[i] && whole_program)
      continue;
    if (hetero[i]) {
      list_t one = {0};
      push(&one, input);
      char *base = format2(d->temp, format2("/", stem(input)));
      ok = lower_hetero_cxx(d, &one, base, bc);
      if (!ok || d->emit == EMIT_HPVMC)
        continue;
    } else if (d->emit == EMIT_HPVMC) {
      fail("--emit=hpvmc: '%s' does not use Hetero-C++", input);
    }
    ok = take_c_program(d, input, bc, hetero[i], &host_inputs);
  }
  if (ok && whole_program) {
    char *base = format2(d->temp, format2("/", format2(stem(hetero_inputs.items[0]), ".program")));
    char *bc = format2(base, ".hpvmc.bc");
    push(&d->temporaries, bc);
    ok = lower_hetero_cxx(d, &hetero_inputs, base, bc);
    for (size_t i = 1; ok && i < hetero_inputs.count; ++i)
      d->cxx = d->cxx || is_cxx(d, hetero_inputs.items[i]);
    if (ok)
      ok = take_c_program(d, hetero_inputs.items[0], bc, true, &host_inputs);
  }
  free(hetero);
  d->c_inputs = host_inputs;
  if (ok && (d->emit == EMIT_MLIR || d->emit == EMIT_LLVM || d->emit == EMIT_KERNELS) &&
      d->c_inputs.count)
    fail("--emit=mlir, llvm, ptx and spirv apply to .mlir and HPVM-C inputs; drop '%s'",
         d->c_inputs.items[0]);
  return ok;
}

/* The lowering's options that other flags set: -v (remarks), -g (line tables), -fsanitize=
 * (every function marked for the pass that instruments it), -march=/-mcpu= (lanes as wide as
 * the registers of the CPU the code is for; the host's by default). */
static void finish_options(driver_t *d) {
  set_option(d->options, "vectorize-remarks", verbose ? "true" : "false");
  set_option(d->options, "line-tables", d->debug_info ? "true" : "false");
  set_option(d->options, "sanitize",
             (d->sanitizers & SANITIZE_ADDRESS)  ? "address"
             : (d->sanitizers & SANITIZE_THREAD) ? "thread"
                                                 : "");
  if (d->vector_bits_known)
    return;
  d->vector_bits_known = true;
  double start = seconds();
  if (hpvmDriverOptionsProbeVectorBits(d->options, HPVM_CC_CLANG,
                                       (const char *const *)d->codegen.items,
                                       d->codegen.count) &&
      verbose) {
    char *bits = hpvmDriverOptionsGet(d->options, "vector-bits");
    fprintf(stderr,
            "hpvm-cc: [find the target's vector width %.3f s] libHPVMCompiler: %s bits\n",
            seconds() - start, bits ? bits : "?");
    hpvmCompileFreeText(bits);
  }
}

/* --emit=ptx or spirv: the kernels of program `input` (from `source`) into the output. */
static bool emit_kernels(const driver_t *d, const char *input, const char *source,
                         const char *name, HPVMCompileInput input_kind) {
  /* The pipeline writes every image into the temporary directory. */
  bool ptx = strcmp(d->emit_kind, "ptx") == 0;
  char *target = d->output ? copy(d->output) : format2(name, ptx ? ".ptx" : ".spv");
  set_option(d->options, "dump-kernels", d->temp);
  bool ok = run_library_stage("compile the kernels", input, "/dev/null", input_kind,
                              HPVMCompileEmitMLIR, d->options);
  set_option(d->options, "dump-kernels", "");
  char *image = format2(d->temp, ptx ? "/hpvm_kernels.ptx" : "/hpvm_kernels.spv");
  if (ok && access(image, R_OK) != 0) {
    fprintf(stderr,
            "hpvm-cc: error: no node of '%s' became a kernel: hint nodes with "
            "GPU_TARGET (HPVM-C) or #hpvm.target<gpu> (.mlir)\n",
            source);
    ok = false;
  }
  if (ok)
    ok = copy_file(image, target);
  remove(image);
  free(image);
  free(target);
  return ok;
}

/* --emit=mlir: program `input` lowered to the llvm dialect, into the output. */
static bool emit_mlir(const driver_t *d, const char *input, bool from_c, const char *name) {
  char *target = d->output ? copy(d->output) : format2(name, ".mlir");
  bool ok = run_library_stage(from_c ? "raise HPVM-C and lower to the llvm dialect"
                                     : "lower to the llvm dialect",
                              input, target,
                              from_c ? HPVMCompileInputHPVMC : HPVMCompileInputMLIR,
                              HPVMCompileEmitMLIR, d->options);
  free(target);
  return ok;
}

/* Reads the whole file `path` into `*size` bytes; NULL when it cannot. */
static char *read_file(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  char *data = NULL;
  long length = -1;
  if (file && fseek(file, 0, SEEK_END) == 0 && (length = ftell(file)) >= 0 &&
      fseek(file, 0, SEEK_SET) == 0 && (data = malloc((size_t)length + 1)) &&
      fread(data, 1, (size_t)length, file) != (size_t)length) {
    free(data);
    data = NULL;
  }
  if (file)
    fclose(file);
  *size = length < 0 ? 0 : (size_t)length;
  return data;
}

/* The fewest LLVM instructions a part of a split program has (as the Python package's
 * toolchain.SPLIT_MIN_INSTRUCTIONS): below it, a clang process more costs more than the
 * part saves. */
enum { SPLIT_MIN_INSTRUCTIONS = 2000 };

/* The program's LLVM IR `bc` as inputs of compile_objects: in up to d->jobs parts that
 * clang compiles at once (hpvmSplitBitcode), or whole when it is small. */
static bool push_ir_parts(driver_t *d, const char *bc) {
  double start = seconds();
  size_t size = 0, *sizes = calloc(d->jobs, sizeof(size_t));
  char *data = read_file(bc, &size), *parts = NULL, *diagnostics = NULL;
  unsigned count = 0;
  if (!data || !sizes)
    fail_internal("cannot read the LLVM IR '%s'", bc);
  if (!hpvmSplitBitcode(data, size, d->jobs, SPLIT_MIN_INSTRUCTIONS, &parts, sizes, &count,
                        &diagnostics)) {
    fprintf(stderr, "hpvm-cc: internal error: %s", diagnostics ? diagnostics : "");
    internal_failure = true;
    return false;
  }
  if (count == 1)
    push(&d->ll_inputs, bc);
  char *base = copy(bc);
  base[strlen(base) - 3] = '\0'; /* less ".bc" */
  size_t offset = 0;
  for (unsigned i = 0; count > 1 && i < count; offset += sizes[i++]) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".part%u.bc", i);
    char *path = format2(base, suffix);
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(parts + offset, 1, sizes[i], file) != sizes[i] || fclose(file) != 0)
      fail_internal("cannot write '%s'", path);
    push(&d->temporaries, path);
    push(&d->ll_inputs, path);
  }
  if (verbose)
    fprintf(stderr, "hpvm-cc: [split the LLVM IR %.3f s] libHPVMCompiler: %s -> %u parts\n",
            seconds() - start, bc, count);
  hpvmCompileFreeText(parts);
  free(data);
  free(sizes);
  return true;
}

/* Program `input` lowered to LLVM IR: the output with --emit=llvm, else an input of
 * compile_objects. Compiled here: bitcode (no text to print and parse again), and, when
 * linked here, the large constants (a model's weights) in an assembly file of .incbin
 * directives, never in the LLVM IR (-c keeps one object per input: they stay in its
 * bitcode, as raw data). */
static bool lower_to_llvm_ir(driver_t *d, const char *input, bool from_c, const char *name) {
  char *ll = d->emit == EMIT_LLVM ? (d->output ? copy(d->output) : format2(name, ".ll"))
                                  : format2(d->temp, format2("/", format2(name, ".bc")));
  char *constants = format2(d->temp, format2("/", format2(name, ".constants.s")));
  if (d->emit != EMIT_LLVM && d->emit != EMIT_OBJECT)
    set_option(d->options, "constants-asm", constants);
  bool ok = run_library_stage(from_c ? "raise HPVM-C and lower to LLVM IR" : "lower to LLVM IR",
                              input, ll, from_c ? HPVMCompileInputHPVMC : HPVMCompileInputMLIR,
                              HPVMCompileEmitLLVMIR, d->options);
  set_option(d->options, "constants-asm", "");
  if (d->emit != EMIT_LLVM) {
    push(&d->temporaries, ll);
    if (ok && d->emit != EMIT_OBJECT && d->jobs > 1)
      ok = push_ir_parts(d, ll);
    else
      push(&d->ll_inputs, ll);
    if (access(constants, F_OK) == 0) {
      push(&d->temporaries, constants);
      push(&d->temporaries, format2(constants, ".bin"));
      push(&d->ll_inputs, constants);
    }
  }
  return ok;
}

/* The lowering, with kernel versions for `device` when one was asked for:
 * to the llvm dialect or LLVM IR, then compiled by compile_objects. */
static bool run_lowering(driver_t *d) {
  bool ok = true;
  for (size_t i = 0; ok && i < d->programs.count; ++i) {
    const char *input = d->programs.items[i];
    const char *source = d->program_sources.items[i];
    char *name = stem(source);
    bool from_c = !ends_with(source, ".mlir");
    finish_options(d);
    if (d->emit == EMIT_KERNELS)
      ok = emit_kernels(d, input, source, name,
                        from_c ? HPVMCompileInputHPVMC : HPVMCompileInputMLIR);
    else if (d->emit == EMIT_MLIR)
      ok = emit_mlir(d, input, from_c, name);
    else
      ok = lower_to_llvm_ir(d, input, from_c, name);
    free(name);
  }
  return ok;
}

/* The clang command (pushed onto `command`, empty) that compiles `input`, LLVM IR (`host`
 * false; the assembly of the large constants among it) or C host code (`host` true), into
 * `object`: hpvm-cc's, and the Python package's through hpvmDriverCompileCommand. */
static void push_object_command(const driver_t *d, bool host, const char *input,
                                const char *object, list_t *command) {
  push(command, HPVM_CC_CLANG);
  push(command, d->opt);
  if (!d->cpu_chosen)
    push(command, "-march=native");
  if (d->shared)
    push(command, "-fPIC");
  append(command, &d->codegen);
  if (!host) {
    push(command, "-Wno-override-module");
    /* The constants' assembly: -O and -march mean nothing to it. */
    if (ends_with(input, ".s"))
      push(command, "-Wno-unused-command-line-argument");
  } else {
    append(command, &d->preprocessor);
    append(command, &d->frontend);
    push_marker_declarations(d, command, input);
    /* clang already compiled this file to LLVM IR, to see whether it uses the HPVM-C
     * API, and printed its warnings then: printing them again is noise. */
    push(command, "-w");
  }
  push(command, "-c");
  if (host)
    push_language(d, command, input); /* -x last: it applies to the inputs after it */
  push(command, input);
  push(command, "-o");
  push(command, object);
}

/* The clang command (`command`, empty) that compiles `input`, LLVM IR (`host` false) or C host
 * code (`host` true), to an object: the output with -c, else one to link. */
static void object_command(driver_t *d, bool host, const char *input, list_t *command) {
  char *name = stem(input);
  char *object = d->emit == EMIT_OBJECT && d->output ? copy(d->output)
                 : d->emit == EMIT_OBJECT
                     ? format2(name, ".o")
                     : format2(d->temp, format2("/", format2(name, host ? ".host.o" : ".o")));
  push_object_command(d, host, input, object, command);
  if (d->emit != EMIT_OBJECT) {
    push(&d->temporaries, object);
    push(&d->objects, object);
  }
  free(name);
}

/* LLVM IR and C: compile to objects. The LLVM IR (a program's parts among it) d->jobs at a
 * time, and the constants' assembly beside them (it mostly waits on the disk). */
static bool compile_objects(driver_t *d) {
  size_t count = d->ll_inputs.count;
  list_t *commands = calloc(count ? count : 1, sizeof(list_t));
  if (!commands)
    fail_internal("%s", "out of memory");
  bool assembly = false;
  for (size_t i = 0; i < count; ++i) {
    object_command(d, false, d->ll_inputs.items[i], &commands[i]);
    assembly = assembly || ends_with(d->ll_inputs.items[i], ".s");
  }
  unsigned at_once = d->jobs > 1 ? d->jobs + assembly : 1;
  bool ok = run_stages("compile LLVM IR", commands, count, at_once);
  for (size_t i = 0; ok && i < d->c_inputs.count; ++i) {
    list_t command = {0};
    object_command(d, true, d->c_inputs.items[i], &command);
    ok = run_stage("compile C", &command);
  }
  return ok;
}

/* --distribute=mpi: the runtime's MPI layer (libhpvm_rt_mpi.a beside the runtime), which
 * takes the streaming calls the program makes (-Wl,--wrap), and Open MPI's library. */
static void add_mpi_layer(const driver_t *d, list_t *command) {
  char *distribute = hpvmDriverOptionsGet(d->options, "distribute");
  bool mpi = distribute && strcmp(distribute, "mpi") == 0;
  hpvmCompileFreeText(distribute);
  if (!mpi)
    return;
  if (!*HPVM_CC_MPI_LIBS)
    fail("--distribute=mpi needs the runtime's MPI layer, which was not built: Open MPI "
         "(openmpi-bin, libopenmpi-dev) was missing when hpvm-cc was configured%s", "");
  const char *slash = strrchr(d->runtime_lib, '/');
  size_t directory = slash ? (size_t)(slash - d->runtime_lib) + 1 : 0;
  size_t size = directory + sizeof "libhpvm_rt_mpi.a";
  char *library = malloc(size);
  if (!library)
    fail_internal("out of memory%s", "");
  snprintf(library, size, "%.*slibhpvm_rt_mpi.a", (int)directory, d->runtime_lib);
  if (access(library, R_OK) != 0)
    fail("--distribute=mpi needs the runtime's MPI layer '%s', which is missing", library);
  push(command, library);
  static const char *const wrapped[] = {
      "hpvm_rt_pipeline_create", "hpvm_rt_pipeline_add_stage", "hpvm_rt_pipeline_connect",
      "hpvm_rt_pipeline_destroy", "hpvm_rt_stream_launch", "hpvm_rt_stream_push",
      "hpvm_rt_stream_pop", "hpvm_rt_stream_close_input", "hpvm_rt_stream_cancel",
      "hpvm_rt_stream_wait"};
  for (size_t w = 0; w < sizeof wrapped / sizeof *wrapped; ++w)
    push(command, format2("-Wl,--wrap=", wrapped[w]));
  /* HPVM_CC_MPI_LIBS: the libraries separated by ';' (CMake's list). */
  char *libraries = format2(HPVM_CC_MPI_LIBS, "");
  for (char *next = strtok(libraries, ";"); next; next = strtok(NULL, ";"))
    push(command, next);
}

/* The link (pushed onto `command`, empty) of `objects` into `output` with the command line's
 * other inputs, the runtime and the linker's flags: hpvm-cc's, and the Python package's through
 * hpvmDriverLinkCommand. */
static void push_link_command(const driver_t *d, const list_t *objects, const char *output,
                              list_t *command) {
  push(command, HPVM_CC_CLANG);
  push(command, d->opt);
  if (d->shared)
    push(command, "-shared");
  /* lld where it is installed beside clang, unless the command chose a linker. */
  bool linker_chosen = false;
  for (size_t f = 0; f < d->codegen.count; ++f)
    linker_chosen = linker_chosen || strncmp(d->codegen.items[f], "-fuse-ld=", 9) == 0;
  for (size_t f = 0; f < d->linker.count; ++f)
    linker_chosen = linker_chosen || strncmp(d->linker.items[f], "-fuse-ld=", 9) == 0;
  if (HPVM_CC_USE_LLD && !linker_chosen)
    push(command, "-fuse-ld=lld");
  append(command, objects);
  append(command, &d->link_inputs);
  add_mpi_layer(d, command);
  push(command, runtime_library(d));
  append(command, &d->linker);
  for (size_t f = 0; f < d->codegen.count; ++f)
    if (is_instrumentation(d->codegen.items[f]) ||
        strncmp(d->codegen.items[f], "-fuse-ld=", 9) == 0)
      push(command, d->codegen.items[f]);
  if (d->cxx)
    push(command, "-lstdc++");
  push(command, "-lpthread");
  push(command, "-ldl");
  push(command, "-lm");
  push(command, "-o");
  push(command, output);
}

/* Link with the runtime. */
static bool link_program(const driver_t *d) {
  list_t command = {0};
  push_link_command(d, &d->objects, d->output ? d->output : "a.out", &command);
  return run_stage("link", &command);
}

/* The phases in order, up to the one where -c or --emit stops; false when one failed. */
static bool run_phases(driver_t *d) {
  bool ok = run_frontend(d);
  if (!ok || d->emit == EMIT_HPVM || d->emit == EMIT_HPVMC)
    return ok;
  ok = run_lowering(d);
  if (!ok || d->emit == EMIT_MLIR || d->emit == EMIT_LLVM || d->emit == EMIT_KERNELS)
    return ok;
  ok = compile_objects(d);
  if (!ok || d->emit == EMIT_OBJECT)
    return ok;
  return link_program(d);
}

/* How many clang processes compile a program's LLVM IR at once: $HPVM_COMPILE_JOBS (1 to
 * 256), else the CPUs this process may run on. */
static unsigned compile_jobs(void) {
  const char *text = getenv("HPVM_COMPILE_JOBS");
  if (text && *text) {
    char *end = NULL;
    errno = 0;
    unsigned long jobs = strtoul(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || jobs < 1 || jobs > 256)
      fail("HPVM_COMPILE_JOBS is '%s'; expected a count from 1 to 256", text);
    return (unsigned)jobs;
  }
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0)
    return (unsigned)CPU_COUNT(&cpus);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (unsigned)online : 1;
}

/* --print-pipeline: the pipeline the command line's options build. */
static int print_pipeline(driver_t *d) {
  finish_options(d);
  char *pipeline = hpvmDriverOptionsPipeline(d->options);
  if (!pipeline)
    fail_internal("out of memory%s", "");
  printf("%s\n", pipeline);
  hpvmCompileFreeText(pipeline);
  return 0;
}

/* Removes the temporaries (unless HPVM_CC_KEEP_TEMPS is set) and reports a failure; the
 * exit status. */
static int finish(const driver_t *d, bool ok) {
  if (!getenv("HPVM_CC_KEEP_TEMPS")) {
    for (size_t i = 0; i < d->temporaries.count; ++i)
      unlink(d->temporaries.items[i]);
    rmdir(d->temp);
  } else {
    fprintf(stderr, "hpvm-cc: temporaries kept in %s\n", d->temp);
  }
  if (!ok && internal_failure) {
    fprintf(stderr, "hpvm-cc: internal error: compilation failed (exit status %d)\n",
            EXIT_INTERNAL_ERROR);
    return EXIT_INTERNAL_ERROR;
  }
  if (!ok) {
    fprintf(stderr, "hpvm-cc: error: compilation failed\n");
    return EXIT_USER_ERROR;
  }
  return 0;
}

/* One command line, start to end; its exit status. */
static int run_driver(driver_t *d, int argc, char **argv) {
  if (!d->options)
    fail_internal("out of memory%s", "");
  if (!parse_command_line(d, argc, argv))
    return 0;
  char *devices = hpvmDriverOptionsGet(d->options, "devices");
  d->device = devices && *devices ? devices : NULL;
  if (d->print_pipeline)
    return print_pipeline(d);
  check_command_line(d);
  check_standards(d);
  d->jobs = compile_jobs();
  find_runtime(d);
  make_temp_dir(d);
  return finish(d, run_phases(d));
}

/* The driver's calls one at a time: they share the globals above. */
static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;

/* The state of a call before its command line is read. */
static driver_t start_call(unsigned flags) {
  verbose = internal_failure = false;
  catch_crashes = (flags & HPVMDriverCatchCrashes) != 0;
  current_stage = temp_dir = NULL;
  temp_files = NULL;
  return (driver_t){.opt = "-O2",
                    .emit = EMIT_EXECUTABLE,
                    .options = hpvmDriverOptionsCreate(),
                    .hetero_streaming = true};
}

int hpvmDriverMain(int argc, char **argv, unsigned flags) {
  pthread_mutex_lock(&one_at_a_time);
  driver_t d = start_call(flags);
  int status = setjmp(driver_exit);
  if (status == 0)
    status = run_driver(&d, argc, argv);
  fflush(stdout);
  fflush(stderr);
  hpvmDriverOptionsDestroy(d.options);
  pthread_mutex_unlock(&one_at_a_time);
  return status;
}

/* What hpvmDriverCompileCommand and hpvmDriverLinkCommand ask for: the compile of `input` into
 * `output` (`objects` NULL), else the link of `objects` into `output`. */
typedef struct {
  const char *input, *output;
  const char *const *objects;
  size_t count;
} command_request_t;

/* The command of `request` for the command line `argv`, its arguments each ended by a NUL
 * (`*size` bytes); NULL with `*error` set when the command line is wrong. */
static char *driver_command(int argc, char **argv, const command_request_t *request,
                            size_t *size, char **error) {
  char *volatile result = NULL;
  *size = 0;
  pthread_mutex_lock(&one_at_a_time);
  driver_t d = start_call(0);
  keep_failure = true;
  failure_text = NULL;
  if (setjmp(driver_exit) == 0) {
    if (!d.options)
      fail_internal("out of memory%s", "");
    if (!parse_command_line(&d, argc, argv))
      fail("'--help' asks for hpvm-cc's help text, not for a command%s", "");
    find_runtime(&d);
    list_t command = {0}, objects = {0};
    if (!request->objects) {
      push_object_command(&d, false, request->input, request->output, &command);
    } else {
      for (size_t i = 0; i < request->count; ++i)
        push(&objects, request->objects[i]);
      push_link_command(&d, &objects, request->output, &command);
    }
    size_t total = 0;
    for (size_t i = 0; i < command.count; ++i)
      total += strlen(command.items[i]) + 1;
    result = malloc(total ? total : 1);
    if (!result)
      fail_internal("out of memory%s", "");
    char *at = result;
    for (size_t i = 0; i < command.count; ++i)
      at = stpcpy(at, command.items[i]) + 1;
    *size = total;
  }
  char *message = failure_text;
  keep_failure = false;
  failure_text = NULL;
  hpvmDriverOptionsDestroy(d.options);
  pthread_mutex_unlock(&one_at_a_time);
  if (error)
    *error = result ? NULL : message ? message : strdup("out of memory");
  else
    free(message);
  return result;
}

char *hpvmDriverCompileCommand(int argc, char **argv, const char *input, const char *object,
                               size_t *size, char **error) {
  command_request_t request = {.input = input, .output = object};
  return driver_command(argc, argv, &request, size, error);
}

char *hpvmDriverLinkCommand(int argc, char **argv, const char *const *objects, size_t count,
                            const char *output, size_t *size, char **error) {
  command_request_t request = {.output = output, .objects = objects, .count = count};
  return driver_command(argc, argv, &request, size, error);
}

char *hpvmDriverClang(void) { return strdup(HPVM_CC_CLANG); }
