/* env_test.c - the runtime's numeric environment variables: one strict parser
 * (hpvm_platform_env_integer) for all of them, so that garbage ("1e3", "-1", " 5", 2^64 - 1)
 * is an error naming the variable, the range expected and what was found, never a silent
 * default or a wrapped value. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/platform.h"
#include "hpvm/approxhpvm/tensorUtils.h"
#include "hpvm/hpvm_rt.h"
#include "sched/pool.h"
#include "test_util.h"

/* The parser itself: unset, in range, and each kind of garbage. */
static void test_parser(void) {
  uint64_t value = 7;
  bool present = true;
  unsetenv("HPVM_TEST_NUMBER");
  CHECK(hpvm_platform_env_integer("HPVM_TEST_NUMBER", 0, 10, &value, &present) == NULL);
  CHECK(!present && value == 7);
  setenv("HPVM_TEST_NUMBER", "", 1);
  CHECK(hpvm_platform_env_integer("HPVM_TEST_NUMBER", 0, 10, &value, &present) == NULL);
  CHECK(!present);
  setenv("HPVM_TEST_NUMBER", "0", 1);
  CHECK(hpvm_platform_env_integer("HPVM_TEST_NUMBER", 0, 10, &value, &present) == NULL);
  CHECK(present && value == 0);
  setenv("HPVM_TEST_NUMBER", "10", 1);
  CHECK(hpvm_platform_env_integer("HPVM_TEST_NUMBER", 0, 10, &value, &present) == NULL);
  CHECK(present && value == 10);
  static const struct {
    const char *text, *found;
  } bad[] = {
      {"1e3", "found 'e3' after the number"},
      {"11", "found a number above 10"},
      {"18446744073709551615", "found a number above 10"},
      {"99999999999999999999999", "found a number above 10"},
      {"-1", "found '-' first"},
      {"+1", "found '+' first"},
      {" 1", "found ' ' first"},
      {"0x10", "found 'x10' after the number"},
      {"five", "found 'f' first"},
      {"3 ", "found ' ' after the number"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    setenv("HPVM_TEST_NUMBER", bad[i].text, 1);
    hpvm_status_t status = hpvm_platform_env_integer("HPVM_TEST_NUMBER", 0, 10, &value, &present);
    CHECK(status != NULL);
    CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
    const char *message = hpvm_status_message(status);
    if (!strstr(message, "HPVM_TEST_NUMBER='") ||
        !strstr(message, "expected a decimal integer from 0 to 10") ||
        !strstr(message, bad[i].found)) {
      fprintf(stderr, "'%s': unexpected message: %s\n", bad[i].text, message);
      exit(1);
    }
    hpvm_status_free(status);
  }
  setenv("HPVM_TEST_NUMBER", "0", 1);
  hpvm_status_t status = hpvm_platform_env_integer("HPVM_TEST_NUMBER", 1, 10, &value, &present);
  CHECK(status && strstr(hpvm_status_message(status), "found a number below 1"));
  hpvm_status_free(status);
  unsetenv("HPVM_TEST_NUMBER");
}

/* HPVM_SPIN_US: 0 (no spinning) to 1000000; 2^64 - 1 used to make idle workers spin for
 * ever (the value times 1000 wrapped), garbage was the default. */
static void test_spin(void) {
  hpvm_sched_pool_t *pool = NULL;
  const char *bad[] = {"18446744073709551615", "1000001", "1e3", "-5", "fast"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    setenv("HPVM_SPIN_US", bad[i], 1);
    hpvm_status_t status = hpvm_sched_pool_create(hpvm_allocator_system(), 1, &pool);
    CHECK(status != NULL);
    CHECK(pool == NULL);
    CHECK(strstr(hpvm_status_message(status), "HPVM_SPIN_US=") != NULL);
    CHECK(strstr(hpvm_status_message(status), "from 0 to 1000000") != NULL);
    hpvm_status_free(status);
  }
  setenv("HPVM_SPIN_US", "0", 1);
  CHECK(hpvm_sched_pool_create(hpvm_allocator_system(), 1, &pool) == NULL);
  hpvm_sched_pool_destroy(pool);
  unsetenv("HPVM_SPIN_US");
}

/* HPVM_OPENCL_DEVICE: checked when the runtime starts, whether or not OpenCL is there. */
static void test_opencl_device(void) {
  setenv("HPVM_OPENCL_DEVICE", "gpu", 1);
  hpvm_status_t status = hpvm_rt_init();
  CHECK(status != NULL);
  CHECK(strstr(hpvm_status_message(status), "HPVM_OPENCL_DEVICE='gpu'") != NULL);
  hpvm_status_free(status);
  setenv("HPVM_OPENCL_DEVICE", "256", 1);
  status = hpvm_rt_init();
  CHECK(status && strstr(hpvm_status_message(status), "from 0 to 255"));
  hpvm_status_free(status);
  setenv("HPVM_OPENCL_DEVICE", "1", 1);
  CHECK(hpvm_rt_init() == NULL);
  hpvm_rt_shutdown();
  unsetenv("HPVM_OPENCL_DEVICE");
}

/* HPVM_CONTRACT_MIN: read by the first hpvm_rt_contract_pays (in a child: it is read once). */
static void contract_pays(void *arg) {
  setenv("HPVM_CONTRACT_MIN", (const char *)arg, 1);
  (void)hpvm_rt_contract_pays(64, 64, 64);
  _exit(0);
}

static void test_contract_min(void) {
  char text[1024];
  CHECK_EQ_INT(test_run_child(contract_pays, "2^20", text, sizeof text), 1);
  CHECK(strstr(text, "hpvm_rt_contract_pays") != NULL);
  CHECK(strstr(text, "HPVM_CONTRACT_MIN='2^20': expected a decimal integer from 1 to") != NULL);
  CHECK_EQ_INT(test_run_child(contract_pays, "0", text, sizeof text), 1);
  CHECK_EQ_INT(test_run_child(contract_pays, "1", text, sizeof text), 0);
}

/* HPVM_TENSOR_BATCHES: "1e3" was atoi'd to 1 and ended the program after its first batch,
 * with status 0. */
static const char *g_labels_path;

static void one_batch(void *arg) {
  setenv("HPVM_TENSOR_BATCHES", (const char *)arg, 1);
  void *result = create2DTensor(float_type, 2, 3);
  uint32_t *labels = readLabels3(g_labels_path, 2);
  (void)computeAccuracy3(labels, result);
  _exit(5); /* no limit reached */
}

static void test_tensor_batches(void) {
  char path[] = "/tmp/hpvm-env-labels-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  uint32_t labels[2] = {0, 1};
  CHECK(write(fd, labels, sizeof labels) == (ssize_t)sizeof labels);
  close(fd);
  g_labels_path = path;
  char text[1024];
  CHECK_EQ_INT(test_run_child(one_batch, "1e3", text, sizeof text), 1);
  CHECK(strstr(text, "HPVM_TENSOR_BATCHES='1e3': expected a decimal integer from 1 to") != NULL);
  CHECK(strstr(text, "found 'e3' after the number") != NULL);
  CHECK_EQ_INT(test_run_child(one_batch, "0", text, sizeof text), 1);
  CHECK_EQ_INT(test_run_child(one_batch, "1", text, sizeof text), 0);
  CHECK_EQ_INT(test_run_child(one_batch, "2", text, sizeof text), 5);
  /* HPVM_TENSOR_DUMP on a full device: the data reach it at fclose, which went unchecked. */
  setenv("HPVM_TENSOR_DUMP", "/dev/full", 1);
  CHECK_EQ_INT(test_run_child(one_batch, "2", text, sizeof text), 1);
  CHECK(strstr(text, "HPVM_TENSOR_DUMP: INVALID_ARGUMENT: cannot append 24 bytes to '/dev/full'") !=
        NULL);
  unsetenv("HPVM_TENSOR_DUMP");
  unlink(path);
}

int main(void) {
  test_parser();
  test_spin();
  test_opencl_device();
  test_contract_min();
  test_tensor_batches();
  printf("env_test: ok\n");
  return 0;
}
