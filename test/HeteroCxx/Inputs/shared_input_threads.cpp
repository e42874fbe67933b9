// One Hetero-C++ graph launched from 8 host threads, 200 launches each, all
// reading one input array: every __hetero_launch tracks the shared input and
// its thread's output, and every __hetero_wait untracks them, so the threads
// hold the input at the same time (the runtime shares it). Each output is
// checked against a plain C++ reference after every launch. main launches the
// graph on the same input before it starts the threads and waits for it after
// they end, so the input is always held by more than one thread.
#include <heterocc.h>
#include <pthread.h>
#include <stdio.h>
#include <thread>
#include <vector>

constexpr int kThreads = 8;
constexpr int kLaunches = 200;
constexpr long kN = 65536;

void affine(const float *in, size_t in_bytes, float *out, size_t out_bytes, float scale, long n) {
  void *section = __hetero_section_begin();
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 4, in, in_bytes, out, out_bytes, scale, n, 1, out, out_bytes,
                           "affine_element");
    __hetero_hint(DEVICE);
    out[i] = in[i] * scale + 1.0f;
  }
  __hetero_section_end(section);
}

static std::vector<float> shared_input(kN);
static pthread_barrier_t start;

static void launcher(int index, long *wrong) {
  std::vector<float> out(kN);
  pthread_barrier_wait(&start);
  for (int launch = 0; launch < kLaunches; ++launch) {
    float scale = (float)(index * kLaunches + launch) * 0.25f;
    void *graph = __hetero_launch((void *)affine, 4, shared_input.data(), kN * sizeof(float),
                                  out.data(), kN * sizeof(float), scale, kN, 1, out.data(),
                                  kN * sizeof(float));
    __hetero_wait(graph);
    for (long i = 0; i < kN; ++i)
      *wrong += out[i] != shared_input[i] * scale + 1.0f;
  }
}

int main() {
  for (long i = 0; i < kN; ++i)
    shared_input[i] = (float)(i % 29) - 14.0f;
  pthread_barrier_init(&start, nullptr, kThreads);
  std::vector<float> first(kN);
  void *outer = __hetero_launch((void *)affine, 4, shared_input.data(), kN * sizeof(float),
                                first.data(), kN * sizeof(float), -1.0f, kN, 1, first.data(),
                                kN * sizeof(float));
  std::vector<std::thread> threads;
  std::vector<long> wrong(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(launcher, t, &wrong[t]);
  long total = 0;
  for (int t = 0; t < kThreads; ++t) {
    threads[t].join();
    total += wrong[t];
  }
  pthread_barrier_destroy(&start);
  __hetero_wait(outer);
  for (long i = 0; i < kN; ++i)
    total += first[i] != 1.0f - shared_input[i];
  printf("threads: %d threads x %d launches, n=%ld wrong=%ld\n", kThreads, kLaunches, kN, total);
  return total != 0;
}
