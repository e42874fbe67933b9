// meet_second_thread() for the "race" mode of faulty.c and ../../HeteroCxx/Inputs/faulty.cpp.
// The race needs two threads to add to the total. On a loaded machine one pool thread can take
// every instance before the other wakes, and ThreadSanitizer then sees no race. So an instance
// waits (up to 10 s, once) until a second thread has entered too. Relaxed atomics: they order
// nothing, so they do not hide the race from ThreadSanitizer. Included only with -DRACE_MEETING
// (the ThreadSanitizer builds): elsewhere the leaf stays one a device can run
// (../../Integration/Devices/sanitizers-opencl.test).
#include <pthread.h>
#include <sched.h>
#include <time.h>

static unsigned long first_thread;
static int second_seen;

static void meet_second_thread(void) {
  unsigned long self = (unsigned long)pthread_self(), first = 0;
  if (!__atomic_compare_exchange_n(&first_thread, &first, self, 0, __ATOMIC_RELAXED,
                                   __ATOMIC_RELAXED) &&
      first != self) {
    __atomic_store_n(&second_seen, 1, __ATOMIC_RELAXED);
    return;
  }
  time_t start = time(NULL);
  while (!__atomic_load_n(&second_seen, __ATOMIC_RELAXED) && time(NULL) - start < 10)
    sched_yield();
  /* No second thread came: the later instances do not wait again (the run ends, the test
   * then fails for want of a race instead of hanging). */
  __atomic_store_n(&second_seen, 1, __ATOMIC_RELAXED);
}
