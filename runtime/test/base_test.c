/* base_test.c - statuses, hpvm_rt_check's exit behaviour and the checked allocator helpers. */

#include "test_util.h"

static void test_status(void) {
  CHECK(hpvm_status_create(HPVM_STATUS_OK, "ignored") == NULL);
  CHECK_EQ_INT(hpvm_status_code(NULL), HPVM_STATUS_OK);
  CHECK(strcmp(hpvm_status_message(NULL), "") == 0);
  hpvm_status_t status = hpvm_status_create(HPVM_STATUS_NOT_FOUND, "no %s #%d", "thing", 7);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_NOT_FOUND);
  CHECK(strcmp(hpvm_status_message(status), "no thing #7") == 0);
  hpvm_status_t clone = hpvm_status_clone(status);
  status = hpvm_status_annotate(status, "looking up %s", "x");
  CHECK(strcmp(hpvm_status_message(status), "looking up x: no thing #7") == 0);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_NOT_FOUND);
  CHECK(strcmp(hpvm_status_message(clone), "no thing #7") == 0);
  hpvm_status_free(status);
  hpvm_status_free(clone);
  hpvm_status_free(NULL);
  CHECK(strcmp(hpvm_status_code_name(HPVM_STATUS_UNAVAILABLE), "UNAVAILABLE") == 0);
  CHECK(strcmp(hpvm_status_code_name((hpvm_status_code_t)99), "UNKNOWN_CODE") == 0);
  CHECK(hpvm_status_annotate(NULL, "nothing") == NULL);
  hpvm_rt_check(NULL); /* OK: returns */
}

static void check_at_unavailable(void *unused) {
  (void)unused;
  hpvm_rt_check_at(hpvm_status_create(HPVM_STATUS_UNAVAILABLE, "no GPU here"), "main.c:3");
}

/* hpvm_rt_check must print the error and exit(1) - never crash, never continue. */
static void test_check_exits(void) {
  char text[256];
  CHECK_EQ_INT(test_run_child(check_at_unavailable, NULL, text, sizeof(text)), 1);
  CHECK(strstr(text, "hpvm: error: main.c:3: UNAVAILABLE: no GPU here") != NULL);
}

static char guarded_a[64], guarded_b[64], guarded_c[64];

/* Tracks a and b, then fails the way compiled code does. */
static void entry_fails(void **args) {
  hpvm_rt_check(hpvm_rt_track(args[0], 64));
  hpvm_rt_check(hpvm_rt_track(args[1], 64));
  hpvm_rt_check_at(hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT, "bad extent -1"), "f.c:9");
}

/* Tracks a; a nested guarded call that fails; returns normally. */
static void entry_nests(void **args) {
  hpvm_rt_check(hpvm_rt_track(args[0], 64));
  void *inner[] = {guarded_b, guarded_c};
  hpvm_status_t status = hpvm_rt_call_guarded(entry_fails, inner);
  *(hpvm_status_code_t *)args[1] = hpvm_status_code(status);
  hpvm_status_free(status);
}

/* hpvm_rt_call_guarded returns the error compiled code would exit for, untracks what the
 * abandoned call tracked, nests, and leaves a successful call's tracking alone. */
static void test_call_guarded(void) {
  void *args[] = {guarded_a, guarded_b};
  hpvm_status_t status = hpvm_rt_call_guarded(entry_fails, args);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strcmp(hpvm_status_message(status), "f.c:9: bad extent -1") == 0);
  hpvm_status_free(status);
  /* Both untracked: they track again. */
  CHECK_OK(hpvm_rt_track(guarded_a, 64));
  CHECK_OK(hpvm_rt_track(guarded_b, 64));
  CHECK_OK(hpvm_rt_untrack(guarded_a));
  CHECK_OK(hpvm_rt_untrack(guarded_b));
  /* Nested: the inner failure returns to the inner guard, the outer call goes on and
   * keeps what it tracked. */
  hpvm_status_code_t inner = HPVM_STATUS_OK;
  void *outer[] = {guarded_a, &inner};
  CHECK_OK(hpvm_rt_call_guarded(entry_nests, outer));
  CHECK_EQ_INT(inner, HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_rt_track(guarded_a, 64), HPVM_STATUS_ALREADY_EXISTS);
  CHECK_OK(hpvm_rt_untrack(guarded_a));
  CHECK_OK(hpvm_rt_track(guarded_b, 64)); /* untracked by the inner guard */
  CHECK_OK(hpvm_rt_track(guarded_c, 64));
  CHECK_OK(hpvm_rt_untrack(guarded_b));
  CHECK_OK(hpvm_rt_untrack(guarded_c));
  CHECK_CODE(hpvm_rt_call_guarded(NULL, NULL), HPVM_STATUS_INVALID_ARGUMENT);
}

static void test_allocator(void) {
  test_allocator_t state = {0};
  hpvm_allocator_t allocator = test_allocator_make(&state);
  void *memory = NULL;
  CHECK_CODE(hpvm_allocator_calloc_array(allocator, SIZE_MAX / 2, 4, &memory),
             HPVM_STATUS_RESOURCE_EXHAUSTED);
  CHECK(memory == NULL);
  CHECK_EQ_INT(atomic_load(&state.live), 0);
  CHECK_OK(hpvm_allocator_calloc_array(allocator, 10, sizeof(int), &memory));
  for (int i = 0; i < 10; ++i)
    CHECK_EQ_INT(((int *)memory)[i], 0);
  ((int *)memory)[9] = 5;
  CHECK_OK(hpvm_allocator_grow_array(allocator, &memory, 10, 20, sizeof(int)));
  CHECK_EQ_INT(((int *)memory)[9], 5);
  CHECK_EQ_INT(((int *)memory)[19], 0);
  hpvm_allocator_free(allocator, memory);
  atomic_store(&state.fail_at, atomic_load(&state.calls) + 1);
  CHECK_CODE(hpvm_allocator_malloc(allocator, 16, &memory), HPVM_STATUS_RESOURCE_EXHAUSTED);
  char *copy = NULL;
  CHECK_OK(hpvm_allocator_strdup(allocator, "abc", &copy));
  CHECK(strcmp(copy, "abc") == 0);
  hpvm_allocator_free(allocator, copy);
  CHECK_EQ_INT(atomic_load(&state.live), 0);
  size_t out;
  CHECK(!hpvm_size_mul(SIZE_MAX, 2, &out));
  CHECK(!hpvm_size_add(SIZE_MAX, 1, &out));
  CHECK(hpvm_size_mul(3, 4, &out) && out == 12);
}

/* Memory for _Alignas(64) objects (the pool's and the ring's cache-line padded atomics): the
 * system allocator promises only max_align_t, and UBSan reported the pool at a 16-byte boundary. */
static void test_aligned_allocation(void) {
  test_allocator_t state = {0};
  hpvm_allocator_t allocator = test_allocator_make(&state);
  for (size_t alignment = sizeof(void *); alignment <= 4096; alignment *= 4) {
    for (size_t count = 1; count <= 9; count += 4) {
      unsigned char *memory = NULL;
      CHECK_OK(hpvm_allocator_calloc_aligned(allocator, count, 24, alignment, (void **)&memory));
      CHECK((uintptr_t)memory % alignment == 0);
      for (size_t i = 0; i < count * 24; ++i)
        CHECK_EQ_INT(memory[i], 0);
      memset(memory, 0xab, count * 24); /* the whole block is ours (ASan checks it) */
      hpvm_allocator_free_aligned(allocator, memory);
    }
  }
  CHECK_EQ_INT(atomic_load(&state.live), 0);
  hpvm_allocator_free_aligned(allocator, NULL);
  void *memory = NULL;
  CHECK_CODE(hpvm_allocator_calloc_aligned(allocator, 1, 8, 48, &memory),
             HPVM_STATUS_INVALID_ARGUMENT);
  CHECK_CODE(hpvm_allocator_calloc_aligned(allocator, SIZE_MAX / 2, 4, 64, &memory),
             HPVM_STATUS_RESOURCE_EXHAUSTED);
  CHECK_CODE(hpvm_allocator_calloc_aligned(allocator, 1, SIZE_MAX - 8, 64, &memory),
             HPVM_STATUS_RESOURCE_EXHAUSTED);
  CHECK(memory == NULL);
  atomic_store(&state.fail_at, atomic_load(&state.calls) + 1);
  CHECK_CODE(hpvm_allocator_calloc_aligned(allocator, 1, 64, 64, &memory),
             HPVM_STATUS_RESOURCE_EXHAUSTED);
  CHECK_EQ_INT(atomic_load(&state.live), 0);
}

int main(void) {
  test_status();
  test_check_exits();
  test_call_guarded();
  test_allocator();
  test_aligned_allocation();
  printf("base_test: OK\n");
  return 0;
}
