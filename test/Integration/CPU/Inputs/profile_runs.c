/* HPVM_PROFILE through the public calls alone, as compiled code makes them: nested runs on
 * one thread, a run left open (a failed guarded call's), an end without a start, and four
 * threads running one node at once (profile.test checks the report). */
#include <hpvm/hpvm_rt.h>

#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void sleep_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

static void *worker(void *unused) {
  (void)unused;
  for (int i = 0; i < 5; ++i) {
    hpvm_rt_trace_node("worker", NULL);
    hpvm_rt_trace_node_done("worker");
  }
  return NULL;
}

int main(void) {
  /* outer contains two runs of inner, and 10 ms of its own: outer > inner in total. */
  hpvm_rt_trace_node("outer", NULL);
  for (int i = 0; i < 2; ++i) {
    hpvm_rt_trace_node("inner", NULL);
    sleep_ms(20);
    hpvm_rt_trace_node_done("inner");
  }
  sleep_ms(10);
  hpvm_rt_trace_node_done("outer");
  /* "lost" never ends: outer2's end drops it. */
  hpvm_rt_trace_node("outer2", NULL);
  hpvm_rt_trace_node("lost", NULL);
  hpvm_rt_trace_node_done("outer2");
  hpvm_rt_trace_node_done("lost");  /* no open run any more: ignored */
  hpvm_rt_trace_node_done("ghost"); /* never started: ignored */
  /* A kernel that ran on a device (non-NULL device) is not a CPU run: not timed. */
  hpvm_rt_trace_node("device_node", "cuda:0");
  hpvm_rt_trace_node_done("device_node");
  pthread_t threads[4];
  for (int t = 0; t < 4; ++t)
    pthread_create(&threads[t], NULL, worker, NULL);
  for (int t = 0; t < 4; ++t)
    pthread_join(threads[t], NULL);
  printf("profile runs: done\n");
  return 0;
}
