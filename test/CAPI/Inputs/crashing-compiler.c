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

bool hpvmCompileFile(const char *input_path, const char *output_path,
                     const HPVMCompileOptions *options, char **diagnostics) {
  (void)input_path, (void)output_path, (void)diagnostics;
  if (options && options->on_diagnostic)
    options->on_diagnostic("prog.c:5:3: error: a diagnostic printed before the crash\n",
                           options->user_data);
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
