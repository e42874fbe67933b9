// Buffers as Hetero-C programs name them: an output buffer not listed among a
// task's inputs, the same array element's address written twice in a launch
// (&rows[r] as input and output), a constant size (sizeof) passed down two
// levels, and a task whose code calls a function holding a section (the
// function's graph is that task's).
#include <hetero.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  float values[64];
} Row;

// A function with a section, called from a task: its graph becomes the task's.
static void square_all(Row *row, size_t row_bytes, int n) {
  void *section = __hetero_section_begin();
  for (int i = 0; i < n; ++i) {
    __hetero_parallel_loop(1, 2, row, row_bytes, n, 1, row, row_bytes, "square");
    __hetero_hint(DEVICE);
    row->values[i] = row->values[i] * row->values[i];
  }
  __hetero_section_end(section);
}

void process(Row *row, size_t row_bytes, float *total, size_t total_bytes, int n) {
  void *section = __hetero_section_begin();
  void *squares = __hetero_task_begin(2, row, row_bytes, n, 1, row, row_bytes, "squares");
  square_all(row, row_bytes, n);
  __hetero_task_end(squares);
  // `total` is only an output of this task.
  void *sum = __hetero_task_begin(2, row, row_bytes, n, 1, total, total_bytes, "sum");
  float s = 0;
  for (int i = 0; i < n; ++i)
    s += row->values[i];
  *total = s;
  __hetero_task_end(sum);
  __hetero_section_end(section);
}

int main(void) {
  Row rows[3];
  float totals[3];
  long wrong = 0;
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 64; ++i)
      rows[r].values[i] = (float)(i % (r + 3)) - 1.0f;
    int n = 16 + 16 * r;
    void *graph = __hetero_launch((void *)process, 3, &rows[r], sizeof(Row), &totals[r],
                                  sizeof(float), n, 2, &rows[r], sizeof(Row), &totals[r],
                                  sizeof(float));
    __hetero_wait(graph);
    float expect = 0;
    for (int i = 0; i < n; ++i) {
      float v = (float)(i % (r + 3)) - 1.0f;
      wrong += rows[r].values[i] != v * v;
      expect += v * v;
    }
    wrong += totals[r] != expect;
    printf("buffers: row=%d n=%d total=%.1f\n", r, n, totals[r]);
  }
  printf("buffers: wrong=%ld\n", wrong);
  return wrong != 0;
}
