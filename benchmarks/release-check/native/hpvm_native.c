/*===- hpvm_native.c - the HPVM-C API for a sequential native run ----------===*
 *
 * See hpvm_native.h. Compiled by clang with the project's hpvm.h, so the
 * definitions below have exactly the declared signatures. Graph-building calls
 * (__hpvm__createNodeND, __hpvm__bindIn, __hpvm__bindOut, __hpvm__edge) abort:
 * internal nodes are not run natively, the drivers call the leaves directly.
 * __hpvm__launch runs the driver's hpvm_native_root.
 *===----------------------------------------------------------------------===*/
#include "hpvm_native.h"

#include <hpvm.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__thread hpvm_native_level hpvm_native_frame[HPVM_NATIVE_LEVELS] = {
    {{0, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, 1, 1}}};

static __thread size_t native_outputs[HPVM_NATIVE_MAX_OUTPUTS];
static __thread unsigned native_num_outputs;

void hpvm_native_unsupported(const char *what) {
  fprintf(stderr, "hpvm_native: %s is not supported in the native build "
                  "(the driver must call the leaves itself)\n", what);
  abort();
}

void hpvm_native_set(int level, long x, long y, long z, long nx, long ny, long nz) {
  if (level < 0 || level >= HPVM_NATIVE_LEVELS)
    hpvm_native_unsupported("a node level above 2");
  hpvm_native_level *l = &hpvm_native_frame[level];
  l->id[0] = x, l->id[1] = y, l->id[2] = z;
  l->num[0] = nx, l->num[1] = ny, l->num[2] = nz;
}

size_t hpvm_native_output(unsigned index) {
  if (index >= native_num_outputs) {
    fprintf(stderr, "hpvm_native: output %u read, the leaf returned %u\n", index,
            native_num_outputs);
    abort();
  }
  return native_outputs[index];
}

/* ---- Every node ---------------------------------------------------------- */

void __hpvm__hint(enum Target target) { (void)target; }
void __hpvm__attributes(unsigned nIn, ...) { (void)nIn; }

void __hpvm__return(unsigned n, ...) {
  if (n > HPVM_NATIVE_MAX_OUTPUTS)
    hpvm_native_unsupported("__hpvm__return of more than 8 values");
  va_list ap;
  va_start(ap, n);
  for (unsigned i = 0; i < n; i++)
    native_outputs[i] = va_arg(ap, size_t);
  va_end(ap);
  native_num_outputs = n;
}

void *__hpvm__node_id(int id) { (void)id; return NULL; }

/* ---- Leaf queries ---------------------------------------------------------- */

static hpvm_native_level *level_of(void *node) {
  hpvm_native_level *l = (hpvm_native_level *)node;
  if (l < &hpvm_native_frame[0] || l >= &hpvm_native_frame[HPVM_NATIVE_LEVELS]) {
    fprintf(stderr, "hpvm_native: %p is not a node handle of this thread\n", node);
    abort();
  }
  return l;
}

void *__hpvm__getNode(void) { return &hpvm_native_frame[0]; }

void *__hpvm__getParentNode(void *node) {
  hpvm_native_level *l = level_of(node);
  if (l + 1 >= &hpvm_native_frame[HPVM_NATIVE_LEVELS])
    hpvm_native_unsupported("__hpvm__getParentNode above level 2");
  return l + 1;
}

long __hpvm__getNodeInstanceID_x(void *node) { return level_of(node)->id[0]; }
long __hpvm__getNodeInstanceID_y(void *node) { return level_of(node)->id[1]; }
long __hpvm__getNodeInstanceID_z(void *node) { return level_of(node)->id[2]; }
long __hpvm__getNumNodeInstances_x(void *node) { return level_of(node)->num[0]; }
long __hpvm__getNumNodeInstances_y(void *node) { return level_of(node)->num[1]; }
long __hpvm__getNumNodeInstances_z(void *node) { return level_of(node)->num[2]; }

/* Instances run one after the other: a barrier would be wrong, not a no-op. */
void __hpvm__barrier(void) { hpvm_native_unsupported("__hpvm__barrier"); }

void *__hpvm__malloc(long bytes) { return malloc((size_t)bytes); }

/* ---- Graph description: not run natively ------------------------------------ */

void *__hpvm__createNodeND(unsigned dims, ...) {
  (void)dims;
  hpvm_native_unsupported("__hpvm__createNodeND");
}
void __hpvm__bindIn(void *node, unsigned ip, unsigned ic, unsigned isStream) {
  (void)node, (void)ip, (void)ic, (void)isStream;
  hpvm_native_unsupported("__hpvm__bindIn");
}
void __hpvm__bindOut(void *node, unsigned oc, unsigned op, unsigned isStream) {
  (void)node, (void)oc, (void)op, (void)isStream;
  hpvm_native_unsupported("__hpvm__bindOut");
}
void *__hpvm__edge(void *src, void *dst, unsigned replType, unsigned sp, unsigned dp,
                   unsigned isStream) {
  (void)src, (void)dst, (void)replType, (void)sp, (void)dp, (void)isStream;
  hpvm_native_unsupported("__hpvm__edge");
}

/* ---- Host ------------------------------------------------------------------------ */

void __hpvm__init(void) {}
void __hpvm__cleanup(void) {}
void llvm_hpvm_track_mem(void *ptr, size_t bytes) { (void)ptr, (void)bytes; }
void llvm_hpvm_untrack_mem(void *ptr) { (void)ptr; }
void llvm_hpvm_request_mem(void *ptr, size_t bytes) { (void)ptr, (void)bytes; }

typedef struct native_graph {
  unsigned is_stream;
  hpvm_native_run_fn run;
  size_t out_bytes;
  char **outputs; /* streaming: outputs of the pushes not yet popped, and popped ones */
  size_t num_outputs, next_pop, capacity;
} native_graph;

void *__hpvm__launch(unsigned isStream, ...) {
  va_list ap;
  va_start(ap, isStream);
  void *root = va_arg(ap, void *);
  void *args = va_arg(ap, void *);
  va_end(ap);
  const hpvm_native_program *program = &hpvm_native_root;
  if (root != program->root || !isStream != !program->is_stream) {
    fprintf(stderr, "%s: unexpected __hpvm__launch (another root, or %sstreaming)\n",
            program->name, isStream ? "" : "not ");
    abort();
  }
  native_graph *g = (native_graph *)calloc(1, sizeof(native_graph));
  if (!g)
    abort();
  g->is_stream = program->is_stream;
  g->run = program->run;
  g->out_bytes = program->out_bytes;
  if (!g->is_stream)
    g->run(args, NULL);
  return g;
}

void __hpvm__push(void *graph, void *args) {
  native_graph *g = (native_graph *)graph;
  if (!g->is_stream)
    hpvm_native_unsupported("__hpvm__push on a non-streaming graph");
  if (g->num_outputs == g->capacity) {
    g->capacity = g->capacity ? 2 * g->capacity : 16;
    g->outputs = (char **)realloc(g->outputs, g->capacity * sizeof(char *));
    if (!g->outputs)
      abort();
  }
  char *out = (char *)calloc(1, g->out_bytes ? g->out_bytes : 1);
  if (!out)
    abort();
  g->run(args, out);
  g->outputs[g->num_outputs++] = out;
}

void *__hpvm__pop(void *graph) {
  native_graph *g = (native_graph *)graph;
  if (!g->is_stream || g->next_pop == g->num_outputs)
    hpvm_native_unsupported("__hpvm__pop without a pending push");
  return g->outputs[g->next_pop++];
}

void __hpvm__wait(void *graph) {
  native_graph *g = (native_graph *)graph;
  for (size_t i = 0; i < g->num_outputs; i++)
    free(g->outputs[i]);
  free(g->outputs);
  free(g);
}
