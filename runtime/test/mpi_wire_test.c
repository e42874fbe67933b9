/* The MPI layer's wire format (src/mpi/wire.c), without MPI: layouts parsed and refused, an
 * item packed on "rank 0" and unpacked on a "worker" (buffers of its own, in-place aliases,
 * a memref, an empty buffer), the worker's changes sent back as changed bytes only (bytes
 * the host changed elsewhere meanwhile are kept), popped pointers mapped back, a tensor's
 * fresh buffer among the outputs sent back by value, and damaged messages refused. */
#include "mpi/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);           \
      failures++;                                                                        \
    }                                                                                    \
  } while (0)

/* Parsing: offsets with natural alignment, and bad layouts refused with the reason. */
static void test_layouts(void) {
  hpvm_mpi_layout_t layout;
  hpvm_status_t status = hpvm_mpi_layout_parse("b8.8,n8.8,d4.4;d4.4,p8.8", &layout);
  CHECK(status == NULL);
  CHECK(layout.in_count == 3 && layout.in[2].offset == 16 && layout.in_size == 24);
  CHECK(layout.out_count == 2 && layout.out[1].offset == 8 && layout.out_size == 16);
  hpvm_mpi_layout_free(&layout);
  status = hpvm_mpi_layout_parse("B40.8:1:4,d1.1;", &layout);
  CHECK(status == NULL && layout.in[0].rank == 1 && layout.in[0].element == 4);
  CHECK(layout.in_size == 48 && layout.out_size == 0);
  hpvm_mpi_layout_free(&layout);
  const char *bad[] = {"d4.4", "x4.4;", "d4.3;", "b8.8;", "n8.8;", "d0.4;", "B40.8:2:4;",
                       "B40.8;", "p8.8;", ";i8.8,n8.8", "F40.8:1:4;", ";F40.8:2:4"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    status = hpvm_mpi_layout_parse(bad[i], &layout);
    CHECK(status != NULL && hpvm_status_code(status) == HPVM_STATUS_INVALID_ARGUMENT);
    CHECK(status && strstr(hpvm_status_message(status), "bad item layout"));
    hpvm_status_free(status);
  }
}

/* The item: an input buffer, an output buffer given twice (in place), a memref of 3 x 4
 * floats with row stride 5, an empty buffer and a scalar; the output: a sum and a pointer
 * into the output buffer. */
typedef struct {
  float *in;
  size_t in_bytes;
  float *out;
  size_t out_bytes;
  float *same;
  size_t same_bytes;
  struct {
    float *allocated, *aligned;
    int64_t offset, sizes[2], strides[2];
  } m;
  char *empty;
  size_t empty_bytes;
  int scale;
} item_t;

typedef struct {
  float sum;
  float *where;
} output_t;

static const char *LAYOUT = "i8.8,n8.8,o8.8,n8.8,b8.8,n8.8,B56.8:2:4,i8.8,n8.8,d4.4;"
                            "d4.4,p8.8";

static void test_round_trip(void) {
  hpvm_mpi_layout_t layout;
  CHECK(hpvm_mpi_layout_parse(LAYOUT, &layout) == NULL);
  CHECK(layout.in_size == sizeof(item_t) && layout.out_size == sizeof(output_t));
  float in[8], out[8] = {0}, grid[15];
  char empty[1] = {7};
  for (int i = 0; i < 8; ++i)
    in[i] = (float)i;
  for (int i = 0; i < 15; ++i)
    grid[i] = (float)(100 + i);
  item_t item = {in, sizeof in, out, sizeof out, out, sizeof out,
                 {grid, grid, 1, {3, 4}, {5, 1}}, empty, 0, 3};
  hpvm_mpi_bytes_t sent = {0};
  hpvm_mpi_pack_item(&layout, &item, &sent);
  /* The memref spans elements 0 .. 1 + 2 * 5 + 3 = 14 from its aligned pointer. */
  CHECK(sent.size == sizeof item + 3 * 8 + sizeof in + sizeof out + 15 * sizeof(float));

  hpvm_mpi_local_item_t local;
  CHECK(hpvm_mpi_unpack_item(&layout, sent.data, sent.size, &local));
  item_t *mine = (item_t *)local.item;
  CHECK(mine->in != in && mine->out != out && mine->out == mine->same);
  CHECK(mine->m.aligned == mine->m.allocated && mine->m.aligned != grid);
  CHECK(mine->m.aligned[1 + 5 + 2] == grid[8] && mine->empty != NULL && mine->scale == 3);
  CHECK(memcmp(mine->in, in, sizeof in) == 0);
  /* The "graph": writes out[2..3] and one memref element; the host meanwhile writes out[6]
   * (as another item would, elsewhere in a shared buffer). */
  mine->out[2] = 42.0f;
  mine->out[3] = 43.0f;
  mine->m.aligned[12] = -1.0f;
  mine->in[0] = 99.0f; /* an input buffer: never sent back */
  output_t result = {1.5f, mine->out + 2};
  hpvm_mpi_bytes_t back = {0};
  CHECK(hpvm_mpi_pack_result(&layout, &local, &result, &back) == NULL);
  out[6] = 6.0f;
  output_t popped;
  CHECK(hpvm_mpi_unpack_result(&layout, &item, back.data, back.size, &popped));
  CHECK(popped.sum == 1.5f && popped.where == out + 2);
  CHECK(out[2] == 42.0f && out[3] == 43.0f && out[6] == 6.0f && out[0] == 0.0f);
  CHECK(grid[12] == -1.0f && grid[11] == 111.0f && in[0] == 0.0f);
  /* A damaged result (cut short) is refused. */
  CHECK(!hpvm_mpi_unpack_result(&layout, &item, back.data, back.size - 1, NULL));
  /* A popped pointer outside the item's buffers cannot travel. */
  output_t stray = {0.0f, (float *)&failures};
  hpvm_mpi_bytes_t none = {0};
  hpvm_status_t status = hpvm_mpi_pack_result(&layout, &local, &stray, &none);
  CHECK(status && strstr(hpvm_status_message(status), "points outside the item's buffers"));
  hpvm_status_free(status);
  hpvm_mpi_local_item_free(&local);
  /* A damaged item (cut short) is refused. */
  CHECK(!hpvm_mpi_unpack_item(&layout, sent.data, sent.size - 1, &local));
  free(sent.data);
  free(back.data);
  free(none.data);
  hpvm_mpi_layout_free(&layout);
}

/* A memref descriptor of rank 1. */
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} memref_1d_t;

/* Outputs of kind F: one in a buffer the "graph" allocated (it travels by value: rank 0 gets
 * a buffer of its own, the worker's is freed), one into the item's buffer (mapped back);
 * dropped results skip the bytes. */
static void test_fresh_outputs(void) {
  hpvm_mpi_layout_t layout;
  CHECK(hpvm_mpi_layout_parse("I40.8:1:4;F40.8:1:4,F40.8:1:4", &layout) == NULL);
  float in[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  memref_1d_t item = {in, in, 0, {4}, {1}};
  hpvm_mpi_bytes_t sent = {0};
  hpvm_mpi_pack_item(&layout, &item, &sent);
  hpvm_mpi_local_item_t local;
  CHECK(hpvm_mpi_unpack_item(&layout, sent.data, sent.size, &local));
  float *mine = ((memref_1d_t *)local.item)->aligned;
  float *fresh = _mlir_memref_to_llvm_alloc(6 * sizeof(float));
  for (int i = 0; i < 6; ++i)
    fresh[i] = 10.0f + (float)i;
  /* Elements 1, 3, 5 of the fresh buffer (offset 1, stride 2); the item's last two. */
  memref_1d_t outputs[2] = {{fresh, fresh, 1, {3}, {2}}, {mine, mine, 2, {2}, {1}}};
  hpvm_mpi_bytes_t back = {0};
  CHECK(hpvm_mpi_pack_result(&layout, &local, outputs, &back) == NULL);
  memref_1d_t popped[2];
  CHECK(hpvm_mpi_unpack_result(&layout, &item, back.data, back.size, popped));
  /* A buffer of its own (the worker's was freed when its result was packed, so an allocator
   * may hand back the same address: comparing with `fresh` would test the allocator). */
  CHECK(popped[0].allocated == popped[0].aligned && popped[0].aligned != NULL);
  CHECK(popped[0].offset == 1 && popped[0].sizes[0] == 3 && popped[0].strides[0] == 2);
  CHECK(popped[0].aligned[1] == 11.0f && popped[0].aligned[3] == 13.0f &&
        popped[0].aligned[5] == 15.0f);
  CHECK(popped[1].aligned == in && popped[1].offset == 2);
  _mlir_memref_to_llvm_free(popped[0].allocated);
  CHECK(hpvm_mpi_unpack_result(&layout, &item, back.data, back.size, NULL));
  CHECK(!hpvm_mpi_unpack_result(&layout, &item, back.data, back.size - 1, NULL));
  hpvm_mpi_local_item_free(&local);
  free(sent.data);
  free(back.data);
  hpvm_mpi_layout_free(&layout);
}

int main(void) {
  test_layouts();
  test_round_trip();
  test_fresh_outputs();
  if (failures) {
    fprintf(stderr, "mpi_wire_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("mpi_wire_test: ok\n");
  return 0;
}
