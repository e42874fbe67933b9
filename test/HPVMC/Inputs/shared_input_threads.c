// One graph launched from 8 host threads, 200 launches each, all reading the
// same two input arrays: each launch tracks the shared inputs and its own
// output, waits, requests the output and untracks all three (the runtime
// shares the inputs between the threads that hold them). A barrier after the
// tracks of each round makes all 8 threads hold the inputs at once; the
// launches then run concurrently. Every output element is checked after every
// launch.
#include <hpvm/hpvm.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8
#define LAUNCHES 200
#define N 1000

typedef struct __attribute__((__packed__)) {
  float *a;
  size_t bytes_a;
  float *b;
  size_t bytes_b;
  float *c;
  size_t bytes_c;
  float scale;
  long n;
} RootIn;

void scale_add_leaf(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
                    float scale) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  long i = __hpvm__getNodeInstanceID_x(__hpvm__getNode());
  c[i] = a[i] * scale + b[i];
}

void scale_add_root(float *a, size_t bytes_a, float *b, size_t bytes_b, float *c, size_t bytes_c,
                    float scale, long n) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, a, b, 1, c);
  void *leaf = __hpvm__createNodeND(1, scale_add_leaf, n);
  for (int i = 0; i < 7; ++i)
    __hpvm__bindIn(leaf, i, i, 0);
}

static float shared_a[N], shared_b[N];
static pthread_barrier_t all_tracked;

static void *launcher(void *arg) {
  long index = (long)arg;
  float *c = malloc(N * sizeof(float));
  long wrong = 0;
  RootIn *args = malloc(sizeof(RootIn));
  for (int launch = 0; launch < LAUNCHES; ++launch) {
    float scale = (float)(index * LAUNCHES + launch);
    llvm_hpvm_track_mem(shared_a, sizeof shared_a);
    llvm_hpvm_track_mem(shared_b, sizeof shared_b);
    llvm_hpvm_track_mem(c, N * sizeof(float));
    pthread_barrier_wait(&all_tracked);
    args->a = shared_a;
    args->bytes_a = sizeof shared_a;
    args->b = shared_b;
    args->bytes_b = sizeof shared_b;
    args->c = c;
    args->bytes_c = N * sizeof(float);
    args->scale = scale;
    args->n = N;
    void *dfg = __hpvm__launch(0, scale_add_root, (void *)args);
    __hpvm__wait(dfg);
    llvm_hpvm_request_mem(c, N * sizeof(float));
    llvm_hpvm_untrack_mem(c);
    llvm_hpvm_untrack_mem(shared_b);
    llvm_hpvm_untrack_mem(shared_a);
    for (long i = 0; i < N; ++i)
      wrong += c[i] != shared_a[i] * scale + shared_b[i];
  }
  free(args);
  free(c);
  return (void *)wrong;
}

int main(void) {
  for (long i = 0; i < N; ++i) {
    shared_a[i] = (float)(i % 17);
    shared_b[i] = (float)(i % 5) - 2.0f;
  }
  __hpvm__init();
  pthread_barrier_init(&all_tracked, NULL, THREADS);
  pthread_t threads[THREADS];
  for (long t = 0; t < THREADS; ++t)
    if (pthread_create(&threads[t], NULL, launcher, (void *)t) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 2;
    }
  long wrong = 0;
  for (int t = 0; t < THREADS; ++t) {
    void *result;
    pthread_join(threads[t], &result);
    wrong += (long)result;
  }
  pthread_barrier_destroy(&all_tracked);
  __hpvm__cleanup();
  printf("shared_input_threads: threads=%d launches=%d wrong=%ld\n", THREADS, LAUNCHES, wrong);
  return wrong != 0;
}
