/* tensor_objects_test.c - ApproxHPVM's tensor objects (approxhpvm/tensorUtils.h): the
 * registry that tells objects from plain pointers (through growth and deletions), batches
 * (startMemTracking / freeBatchMemory), the launch's shape check, and the file readers'
 * errors, which return to a guard as compiled code's errors do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpvm/approxhpvm/tensorUtils.h"
#include "hpvm/hpvm_rt.h"
#include "test_util.h"

/* Many objects, freed in an interleaved order: each stays an object until freed, and plain
 * pointers are never taken for one. */
static void test_registry(void) {
  enum { kCount = 3000 };
  void **objects = malloc(kCount * sizeof *objects);
  int64_t dims[4] = {1, 2, 3, 4};
  for (int i = 0; i < kCount; ++i)
    objects[i] = create4DTensor(float_type, nchw, 1, 2, 3, 4);
  for (int i = 0; i < kCount; i += 2)
    freeTensor(objects[i]);
  for (int i = 1; i < kCount; i += 2) {
    struct Tensor *t = objects[i];
    CHECK(hpvm_rt_tensor_input(t, 4, dims, 0) == t->host_data);
    CHECK_EQ_INT(t->num_elems, 24);
    CHECK_EQ_INT(t->size_in_bytes, 96);
    CHECK_EQ_INT(t->dims.num_dims, 4);
    CHECK_EQ_INT(t->dims.dim_sizes[3], 4);
  }
  float plain[24];
  CHECK(hpvm_rt_tensor_input(plain, 4, dims, 0) == plain);
  for (int i = 1; i < kCount; i += 2)
    freeTensor(objects[i]);
  free(objects);
}

/* A different rank with as many elements is the same data (a view); other sizes are an
 * error naming both shapes. */
static void entry_wrong_shape(void **args) {
  int64_t dims[4] = {2, 2, 3, 4};
  (void)hpvm_rt_tensor_input(args[0], 4, dims, 3);
}

static void test_shape_check(void) {
  void *t = create4DTensor(float_type, nchw, 1, 2, 3, 4);
  int64_t flat[2] = {2, 12};
  CHECK(hpvm_rt_tensor_input(t, 2, flat, 0) == ((struct Tensor *)t)->host_data);
  void *args[] = {t};
  hpvm_status_t status = hpvm_rt_call_guarded(entry_wrong_shape, args);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "input 3") != NULL);
  CHECK(strstr(hpvm_status_message(status), "sizes 1x2x3x4, but the graph was compiled for "
                                             "2x2x3x4") != NULL);
  hpvm_status_free(status);
  freeTensor(t);
}

/* Objects made while memory is tracked (by the API and as graph outputs) go with the next
 * freeBatchMemory; those made before stay. */
static void test_batches(void) {
  void *weights = create4DTensor(float_type, nchw, 1, 1, 1, 8);
  startMemTracking();
  void *input = create4DTensor(float_type, nchw, 2, 1, 1, 8);
  int64_t dims[2] = {2, 10};
  void *data = NULL;
  void *output = hpvm_rt_tensor_output(2, dims, &data);
  CHECK(data == ((struct Tensor *)output)->host_data);
  CHECK_EQ_INT(((struct Tensor *)output)->dims.dim_sizes[1], 10);
  freeBatchMemory();
  int64_t wdims[4] = {1, 1, 1, 8};
  float *w = hpvm_rt_tensor_input(weights, 4, wdims, 0);
  CHECK(w == ((struct Tensor *)weights)->host_data);
  /* The batch's objects are gone: their addresses are plain pointers again. */
  int64_t idims[4] = {2, 1, 1, 8};
  CHECK(hpvm_rt_tensor_input(input, 4, idims, 0) == input);
  freeTensor(weights);
}

/* Files: the data read back; a short file and a missing one are errors saying what was
 * expected. */
static const char *g_path;

static void entry_read_short(void **args) {
  (void)args;
  (void)readTrainedWeights(g_path, float_type, 2, 1, 1, 8);
}

static void entry_read_missing(void **args) {
  (void)args;
  (void)readInputBatch("/nonexistent/hpvm-tensor-input.bin", float_type, 0, 2, 1, 1, 4);
}

static void test_files(void) {
  char path[] = "/tmp/hpvm-tensor-objects-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  float values[12];
  for (int i = 0; i < 12; ++i)
    values[i] = (float)i * 0.5f;
  CHECK(write(fd, values, sizeof values) == (ssize_t)sizeof values);
  close(fd);
  g_path = path;
  struct Tensor *w = readTrainedWeights(path, float_type, 1, 1, 3, 4);
  CHECK(((float *)w->host_data)[11] == 5.5f);
  struct Tensor *batch = readInputBatch(path, float_type, 1, 3, 1, 1, 4); /* images 1, 2 */
  CHECK_EQ_INT(batch->dims.dim_sizes[0], 2);
  CHECK(((float *)batch->host_data)[0] == 2.0f);
  freeTensor(w);
  freeTensor(batch);

  hpvm_status_t status = hpvm_rt_call_guarded(entry_read_short, NULL);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "holds 48 bytes; expected at least 64") != NULL);
  hpvm_status_free(status);
  status = hpvm_rt_call_guarded(entry_read_missing, NULL);
  CHECK(strstr(hpvm_status_message(status), "cannot open") != NULL);
  hpvm_status_free(status);
  unlink(path);
}

int main(void) {
  test_registry();
  test_shape_check();
  test_batches();
  test_files();
  printf("tensor_objects_test: ok\n");
  return 0;
}
