/*===- hpvm_native.h - HPVM-C run sequentially, without HPVM ---------------===*
 *
 * The native build of a release program (benchmarks/release-check): the
 * release's source is compiled by plain clang with the project's hpvm.h, and
 * hpvm_native.c defines the HPVM-C API for a sequential run. A per-program
 * driver (native/<prog>_native.*) includes the release's main source and
 * defines hpvm_native_root: its run function calls the release's leaf
 * functions over their instance grids in dependence order, mirroring the
 * release's internal nodes.
 *
 * The "current node" is a thread-local frame of three levels: 0 is the leaf,
 * 1 its parent, 2 the parent's parent. __hpvm__getNode() returns level 0,
 * __hpvm__getParentNode(level i) level i + 1; the instance queries read the
 * level's ids and extents, which the drivers set before each call.
 *===----------------------------------------------------------------------===*/
#ifndef RELEASE_CHECK_HPVM_NATIVE_H
#define RELEASE_CHECK_HPVM_NATIVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HPVM_NATIVE_LEVELS 3

typedef struct hpvm_native_level {
  long id[3];  /* instance id in x, y, z */
  long num[3]; /* number of instances in x, y, z */
} hpvm_native_level;

/* The frame of the running leaf instance (level 0), its parent (1), grandparent (2). */
extern __thread hpvm_native_level hpvm_native_frame[HPVM_NATIVE_LEVELS];

/* Set level `level` of the frame: ids (x, y, z) of an instance in a grid of (nx, ny, nz). */
void hpvm_native_set(int level, long x, long y, long z, long nx, long ny, long nz);

/* The values of the last __hpvm__return of this thread (outputs of the leaf just run).
 * Every output of the release's leaves is a size_t (a byte count carried by an edge). */
#define HPVM_NATIVE_MAX_OUTPUTS 8
size_t hpvm_native_output(unsigned index);

/* A launched graph. `run(args, out)` runs the whole graph once on the root's
 * argument struct; `out` (out_bytes, may be NULL when 0) receives the root's
 * outputs. A non-streaming graph runs at once (in hpvm_native_graph_new); a
 * streaming one runs once per __hpvm__push, and __hpvm__pop returns the outputs
 * in push order. __hpvm__wait releases the graph. */
typedef void (*hpvm_native_run_fn)(void *args, void *out);

/* What a driver runs natively: the release's root node function (which
 * __hpvm__launch must be given), whether it is launched streaming, the
 * function that runs its graph, and the size of its output struct (streaming). */
typedef struct hpvm_native_program {
  const char *name;
  const void *root;
  unsigned is_stream;
  hpvm_native_run_fn run;
  size_t out_bytes;
} hpvm_native_program;

/* Defined by each driver; hpvm_native.c's __hpvm__launch runs it. */
extern const hpvm_native_program hpvm_native_root;

/* Print a message and abort: for the parts of the API that are not run natively. */
void hpvm_native_unsupported(const char *what) __attribute__((noreturn));

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RELEASE_CHECK_HPVM_NATIVE_H */
