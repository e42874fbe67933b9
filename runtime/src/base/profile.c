/* profile.c - HPVM_PROFILE: per-thread tables of leaf runs, merged and printed at exit.
 *
 * Each thread that runs a leaf gets its own table (node name -> runs, nanoseconds) and its own
 * stack of open runs; only the report, at exit, reads other threads' tables, under each
 * table's mutex, which the owner otherwise takes uncontended.  Tables outlive their threads
 * (pool workers end at hpvm_rt_shutdown, before the report). */
#include "base/profile.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/platform.h"

_Atomic int hpvm_profile_state = -1;

enum { OPEN_RUNS = 32 };

typedef struct entry_s {
  char *name; /* owned: grid nodes' names die with their graphs */
  uint64_t hash;
  uint64_t runs;
  uint64_t ns;
} entry_t;

typedef struct table_s {
  entry_t *entries; /* open addressing, capacity a power of two, NULL names free */
  size_t capacity;
  size_t count;
} table_t;

typedef struct thread_profile_s {
  pthread_mutex_t mutex; /* guards table: the owner adds, the report reads */
  table_t table;
  struct {
    uint64_t hash; /* of the node's name: a name left open may be freed since (grid nodes') */
    uint64_t start_ns;
  } open[OPEN_RUNS]; /* the owner's only */
  unsigned depth;
  struct thread_profile_s *next;
} thread_profile_t;

static pthread_mutex_t threads_mutex = PTHREAD_MUTEX_INITIALIZER;
static thread_profile_t *threads; /* every thread's table, never freed */
static _Thread_local thread_profile_t *mine;
static pthread_once_t report_once = PTHREAD_ONCE_INIT;

static void report_at_exit(void) { hpvm_profile_report(stderr); }
static void register_report(void) { atexit(report_at_exit); }

bool hpvm_profile_read_environment(void) {
  uint64_t value = 0;
  bool given = false;
  /* Compiled leaves call this without a status to return: garbage stops the program (or
   * returns to a guard) naming the variable, as the runtime's other settings do. */
  hpvm_rt_check_at(hpvm_platform_env_integer("HPVM_PROFILE", 0, 1, &value, &given),
                   "hpvm_rt_trace_node");
  int state = given && value ? 1 : 0;
  if (state)
    pthread_once(&report_once, register_report);
  /* Racing first readers compute the same answer: a plain store is enough. */
  atomic_store_explicit(&hpvm_profile_state, state, memory_order_relaxed);
  return state != 0;
}

static uint64_t hash_name(const char *name) {
  uint64_t hash = 14695981039346656037ull; /* FNV-1a */
  for (const unsigned char *c = (const unsigned char *)name; *c; ++c)
    hash = (hash ^ *c) * 1099511628211ull;
  return hash;
}

/* The slot of `name` in `table`, or the free slot where it belongs (capacity > count). */
static entry_t *find_slot(table_t *table, const char *name, uint64_t hash) {
  size_t mask = table->capacity - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    entry_t *entry = &table->entries[i];
    if (!entry->name || (entry->hash == hash && strcmp(entry->name, name) == 0))
      return entry;
  }
}

static bool grow(table_t *table) {
  size_t capacity = table->capacity ? 2 * table->capacity : 64;
  entry_t *entries = calloc(capacity, sizeof(entry_t));
  if (!entries)
    return false;
  table_t grown = {entries, capacity, table->count};
  for (size_t i = 0; i < table->capacity; ++i)
    if (table->entries[i].name)
      *find_slot(&grown, table->entries[i].name, table->entries[i].hash) = table->entries[i];
  free(table->entries);
  *table = grown;
  return true;
}

/* Adds `runs` runs of `ns` nanoseconds to `name`, whose hash_name is `hash` (dropped when out
 * of memory). */
static void table_add(table_t *table, const char *name, uint64_t hash, uint64_t runs,
                      uint64_t ns) {
  if (4 * (table->count + 1) > 3 * table->capacity && !grow(table))
    return;
  entry_t *entry = find_slot(table, name, hash);
  if (!entry->name) {
    char *copy = strdup(name);
    if (!copy)
      return;
    *entry = (entry_t){copy, hash, 0, 0};
    ++table->count;
  }
  entry->runs += runs;
  entry->ns += ns;
}

static thread_profile_t *thread_profile(void) {
  if (mine)
    return mine;
  thread_profile_t *profile = calloc(1, sizeof(*profile));
  if (!profile)
    return NULL;
  pthread_mutex_init(&profile->mutex, NULL);
  pthread_mutex_lock(&threads_mutex);
  profile->next = threads;
  threads = profile;
  pthread_mutex_unlock(&threads_mutex);
  mine = profile;
  return profile;
}

void hpvm_profile_start(const char *node) {
  thread_profile_t *profile = thread_profile();
  if (!profile)
    return;
  if (profile->depth == OPEN_RUNS) {
    /* Runs nested 32 deep, or left open by failed guarded calls: forget the oldest. */
    memmove(&profile->open[0], &profile->open[1], (OPEN_RUNS - 1) * sizeof(profile->open[0]));
    --profile->depth;
  }
  profile->open[profile->depth].hash = hash_name(node);
  profile->open[profile->depth].start_ns = hpvm_platform_now_ns();
  ++profile->depth;
}

void hpvm_profile_done(const char *node) {
  uint64_t end_ns = hpvm_platform_now_ns();
  thread_profile_t *profile = mine;
  if (!profile)
    return;
  /* Runs are matched by their names' 64-bit hashes: the name of a run left open is never
   * read again. */
  uint64_t hash = hash_name(node);
  for (unsigned i = profile->depth; i-- > 0;) {
    if (profile->open[i].hash != hash)
      continue;
    uint64_t ns = end_ns - profile->open[i].start_ns;
    profile->depth = i;
    pthread_mutex_lock(&profile->mutex);
    table_add(&profile->table, node, hash, 1, ns);
    pthread_mutex_unlock(&profile->mutex);
    return;
  }
}

static int by_time(const void *a, const void *b) {
  const entry_t *x = *(const entry_t *const *)a, *y = *(const entry_t *const *)b;
  if (x->ns != y->ns)
    return x->ns < y->ns ? 1 : -1;
  return strcmp(x->name, y->name);
}

void hpvm_profile_report(FILE *stream) {
  table_t merged = {0};
  pthread_mutex_lock(&threads_mutex);
  for (thread_profile_t *profile = threads; profile; profile = profile->next) {
    pthread_mutex_lock(&profile->mutex);
    for (size_t i = 0; i < profile->table.capacity; ++i) {
      entry_t *entry = &profile->table.entries[i];
      if (entry->name)
        table_add(&merged, entry->name, entry->hash, entry->runs, entry->ns);
    }
    pthread_mutex_unlock(&profile->mutex);
  }
  pthread_mutex_unlock(&threads_mutex);
  entry_t **sorted = calloc(merged.count ? merged.count : 1, sizeof(entry_t *));
  size_t count = 0;
  uint64_t total_ns = 0, total_runs = 0;
  for (size_t i = 0; sorted && i < merged.capacity; ++i)
    if (merged.entries[i].name) {
      sorted[count++] = &merged.entries[i];
      total_ns += merged.entries[i].ns;
      total_runs += merged.entries[i].runs;
    }
  qsort(sorted, count, sizeof(entry_t *), by_time);
  for (size_t i = 0; i < count; ++i) {
    const entry_t *entry = sorted[i];
    double ms = entry->ns / 1e6;
    fprintf(stream, "hpvm-profile: %.3f %llu %.4f %.1f%% %s\n", ms,
            (unsigned long long)entry->runs, ms / (double)entry->runs,
            total_ns ? 100.0 * (double)entry->ns / (double)total_ns : 0.0, entry->name);
  }
  fprintf(stream, "hpvm-profile: total %.3f ms in %llu runs of %zu nodes\n", total_ns / 1e6,
          (unsigned long long)total_runs, count);
  fflush(stream);
  for (size_t i = 0; i < merged.capacity; ++i)
    free(merged.entries[i].name);
  free(merged.entries);
  free(sorted);
}
