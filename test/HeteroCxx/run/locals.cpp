// The locals of a task, of a parallel loop's body and of a launched region are
// theirs, whatever their type: arrays, structs, std::array, objects with
// constructors, variables whose address is taken, declared without braces
// around the region (their scope, and clang's lifetime markers, end after the
// end marker). A local of the section that only one task uses is that task's.
// An object whose scope is the function's is destroyed at the end of its task.
#include <heterocc.h>
#include <array>
#include <stdio.h>

struct P { int x, y; };
struct Counter {
  int total;
  Counter() : total(5) {}
  void add(int v) { total += v; }
};
static void bump(int *k) { *k += 1; }
static long tallied = 0;
struct Tally {
  long count = 0;
  ~Tally() { tallied += count; }
};

void root(int *a, size_t na, int *b, size_t nb, long n) {
  void *s = __hetero_section_begin();
  int scratch[8]; // the section's, used only by the task below
  void *t = __hetero_task_begin(2, a, na, n, 1, a, na, "task_locals");
  int table[16];
  for (int k = 0; k < 16; ++k) table[k] = k * k;
  P p = {3, 4};
  std::array<int, 4> arr{};
  arr[2] = 7;
  Counter counter;
  int k = 1;
  bump(&k);
  for (int j = 0; j < 8; ++j) scratch[j] = j;
  for (long i = 0; i < n; ++i) {
    counter.add(1);
    a[i] += table[i % 16] + p.x * p.y + arr[2] + k + scratch[i % 8];
  }
  a[0] += counter.total;
  Tally tally; // destroyed at the end of the task
  tally.count = n;
  __hetero_task_end(t);
  for (long i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 2, b, nb, n, 1, b, nb, "loop_locals");
    __hetero_hint(DEVICE);
    int tmp[4];
    for (int j = 0; j < 4; ++j) tmp[j] = (int)i * j;
    P q = {1, 2};
    std::array<int, 3> x{};
    x[1] = 3;
    Counter c;
    c.add((int)i);
    int m = 2;
    bump(&m);
    b[i] = tmp[3] + q.y + x[1] + c.total + m;
  }
  __hetero_section_end(s);
}

// The reference: the same arithmetic, written out.
static long reference(long n) {
  long sum = 0;
  for (long i = 0; i < n; ++i) {
    long a = i + (i % 16) * (i % 16) + 12 + 7 + 2 + i % 8 + (i == 0 ? 5 + n : 0);
    long b = 3 * i + 2 + 3 + 5 + i + 3;
    sum += a * 3 + b;
  }
  return sum;
}

int main() {
  enum { N = 100 };
  int a[N], b[N];
  for (int i = 0; i < N; ++i) a[i] = b[i] = i;
  __hetero_wait(__hetero_launch((void *)root, 3, a, sizeof a, b, sizeof b, (long)N, 2, a,
                                sizeof a, b, sizeof b));
  // A launched region's own local array.
  long total = 0;
  void *region = __hetero_launch_begin(1, b, sizeof b, 1, b, sizeof b);
  int twice[N];
  for (int i = 0; i < N; ++i) twice[i] = 2 * b[i];
  for (int i = 0; i < N; ++i) b[i] = twice[i] / 2;
  __hetero_launch_end(region);
  for (int i = 0; i < N; ++i) total += a[i] * 3 + b[i];
  long expected = reference(N);
  printf("locals: sum=%ld a0=%d b99=%d tallied=%ld wrong=%d\n", total, a[0], b[N - 1], tallied,
         total != expected || tallied != N);
  return total != expected || tallied != N;
}
