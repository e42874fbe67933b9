/* crashing-compiler.c - stands in for libHPVMCompiler.so in hpvm-cc-internal-error.test
 * (loaded with LD_PRELOAD): hands over a diagnostic as the compiler would, then crashes the
 * way $CRASH_MODE says: "segv" (default) in the calling thread, "abort", or "thread" (a
 * segmentation fault in another thread, as in a pass running in MLIR's thread pool). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "HPVM/C/Compiler.h"

static void *crash(void *unused) {
  (void)unused;
  raise(SIGSEGV);
  return NULL;
}

bool hpvmCompileFileWithOptions(const char *input_path, const char *output_path,
                                int input_kind, int emit, const char *pipeline_options,
                                void (*on_diagnostic)(const char *, void *), void *user_data,
                                char **diagnostics) {
  (void)input_path, (void)output_path, (void)input_kind, (void)emit, (void)pipeline_options,
      (void)diagnostics;
  if (on_diagnostic)
    on_diagnostic("prog.c:5:3: error: a diagnostic printed before the crash\n", user_data);
  const char *mode = getenv("CRASH_MODE");
  if (mode && strcmp(mode, "abort") == 0)
    abort();
  if (mode && strcmp(mode, "thread") == 0) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, crash, NULL) == 0)
      pthread_join(thread, NULL);
  }
  crash(NULL);
  return false;
}

bool hpvmCompileFile(const char *input_path, const char *output_path,
                     const HPVMCompileOptions *options, char **diagnostics) {
  return hpvmCompileFileWithOptions(input_path, output_path, 0, 0, NULL,
                                    options ? options->on_diagnostic : NULL,
                                    options ? options->user_data : NULL, diagnostics);
}
