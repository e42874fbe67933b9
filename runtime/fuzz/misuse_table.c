/* misuse_table.c - prints the table of docs/Reliability.md: each misuse of hpvm_rt.h a hostile
 * but careful caller might try, and the status it gets (code and message).  Regenerate with
 * scripts/fuzz.sh's build: build/runtime-fuzz/fuzz/hpvm_rt_misuse_table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpvm/hpvm_rt.h"

static void row(const char *what, hpvm_status_t status) {
  char message[512];
  snprintf(message, sizeof(message), "%s", hpvm_status_message(status));
  for (char *c = message; *c; ++c) /* keep the Markdown table intact */
    if (*c == '|' || *c == '\n')
      *c = ' ';
  /* Addresses differ from run to run: show them as 0x... */
  printf("| %s | `%s` | %s |\n", what, hpvm_status_code_name(hpvm_status_code(status)),
         status ? message : "");
  hpvm_status_free(status);
}

static hpvm_status_t pass(void *context, hpvm_rt_device_t *device, int64_t item,
                          const void *const *in, void *const *out) {
  (void)context, (void)device, (void)item;
  memcpy(out[0], in[0], 4);
  return NULL;
}

static void body(void *context, const hpvm_rt_instance_range_t *range) { (void)context, (void)range; }
static hpvm_status_t node(void *context, hpvm_rt_device_t *device, int64_t item) {
  (void)context, (void)device, (void)item;
  return NULL;
}

int main(void) {
  setenv("HPVM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  printf("| misuse | status | message |\n|---|---|---|\n");
  hpvm_rt_device_t *cpu;
  hpvm_rt_check(hpvm_rt_device_get(HPVM_RT_DEVICE_CPU, &cpu));
  uint64_t buffer, other;
  hpvm_rt_check(hpvm_rt_device_alloc(cpu, 16, &buffer));
  char source[64] = {0}, target[64];
  row("`copy_to_device(cpu, h, 8, src, 64)` into a 16-byte buffer",
      hpvm_rt_device_copy_to_device(cpu, buffer, 8, source, 64));
  row("`copy_to_host(cpu, dst, h, SIZE_MAX - 4, 8)` (offset + size wraps)",
      hpvm_rt_device_copy_to_host(cpu, target, buffer, SIZE_MAX - 4, 8));
  row("`copy_to_host(cpu, dst, h, 0, 17)` from a 16-byte buffer",
      hpvm_rt_device_copy_to_host(cpu, target, buffer, 0, 17));
  row("`copy_to_device(cpu, h, 16, src, 0)` (empty copy at the end)",
      hpvm_rt_device_copy_to_device(cpu, buffer, 16, source, 0));
  row("`copy_to_device(cpu, 0, ...)`", hpvm_rt_device_copy_to_device(cpu, 0, 0, source, 1));
  row("`copy_to_device(cpu, h, 0, NULL, 4)`", hpvm_rt_device_copy_to_device(cpu, buffer, 0, NULL, 4));
  row("`device_free(cpu, h + 8)` (interior pointer)", hpvm_rt_device_free(cpu, buffer + 8));
  row("`device_free(cpu, h)`", hpvm_rt_device_free(cpu, buffer));
  row("`device_free(cpu, h)` again (double free)", hpvm_rt_device_free(cpu, buffer));
  row("`copy_to_host(cpu, dst, h, 0, 1)` after the free", hpvm_rt_device_copy_to_host(cpu, target, buffer, 0, 1));
  row("`device_free(cpu, 0xdeadbeef)` (never allocated)", hpvm_rt_device_free(cpu, 0xdeadbeef));
  row("`device_free(cpu, 0)`", hpvm_rt_device_free(cpu, 0));
  row("`device_free(NULL, h)`", hpvm_rt_device_free(NULL, buffer));
  row("`device_alloc(cpu, 0, &h)`", hpvm_rt_device_alloc(cpu, 0, &other));
  static float data[8];
  hpvm_rt_check(hpvm_rt_track(data, sizeof(data)));
  uint64_t handle;
  size_t offset;
  hpvm_rt_check(hpvm_rt_request_device(data, 0, cpu, HPVM_RT_ACCESS_IN, &handle, &offset));
  row("`device_free(cpu, handle)` of the CPU copy from `request_device` (the host object)",
      hpvm_rt_device_free(cpu, handle));
  row("`track(p, 32)` twice", hpvm_rt_track(data, sizeof(data)));
  row("`track(p + 4, 8)` inside a tracked object", hpvm_rt_track(&data[1], 8));
  row("`track(p, 0)`", hpvm_rt_track(&data[1], 0));
  row("`request_host(p + 28, 8, IN)` past the object", hpvm_rt_request_host(&data[7], 8, HPVM_RT_ACCESS_IN));
  row("`request_host(p, 0, 0)` (bad access mode)", hpvm_rt_request_host(data, 0, (hpvm_rt_access_t)0));
  row("`request_device(p, 0, NULL, ...)`", hpvm_rt_request_device(data, 0, NULL, HPVM_RT_ACCESS_IN, &handle, &offset));
  hpvm_rt_check(hpvm_rt_untrack(data));
  row("`untrack(p)` again", hpvm_rt_untrack(data));
  row("`request_host(p, 4, IN)` of an untracked pointer", hpvm_rt_request_host(data, 4, HPVM_RT_ACCESS_IN));
  int64_t extents[3] = {4, -1, 2};
  row("`parallel_for(0, ...)`", hpvm_rt_parallel_for(0, extents, body, NULL));
  row("`parallel_for(4, ...)`", hpvm_rt_parallel_for(4, extents, body, NULL));
  row("`parallel_for(2, {4, -1})`", hpvm_rt_parallel_for(2, extents, body, NULL));
  row("`parallel_for(1, {4}, NULL body)`", hpvm_rt_parallel_for(1, extents, NULL, NULL));
  hpvm_rt_graph_t *graph;
  hpvm_rt_check(hpvm_rt_graph_create(2, &graph));
  hpvm_rt_node_version_t version = {HPVM_RT_DEVICE_CPU, node};
  uint32_t a, b;
  hpvm_rt_check(hpvm_rt_graph_add_node(graph, "a", &version, 1, NULL, &a));
  hpvm_rt_check(hpvm_rt_graph_add_node(graph, "b", &version, 1, NULL, &b));
  row("`graph_add_node(g, \"x\", versions, 0, ...)`", hpvm_rt_graph_add_node(graph, "x", &version, 0, NULL, &a));
  row("`graph_add_edge(g, 0, 7)` (no node 7)", hpvm_rt_graph_add_edge(graph, 0, 7));
  row("`graph_add_edge(g, 1, 1)`", hpvm_rt_graph_add_edge(graph, 1, 1));
  hpvm_rt_check(hpvm_rt_graph_add_edge(graph, 0, 1));
  hpvm_rt_check(hpvm_rt_graph_add_edge(graph, 1, 0));
  row("`graph_run(g)` with edges a -> b -> a", hpvm_rt_graph_run(graph));
  hpvm_rt_graph_destroy(graph);
  hpvm_rt_pipeline_t *pipeline;
  hpvm_rt_check(hpvm_rt_pipeline_create(4, 4, 0, &pipeline));
  hpvm_rt_stage_version_t stage = {HPVM_RT_DEVICE_CPU, pass};
  size_t sizes[2] = {4, 4}, wide[1] = {8};
  uint32_t sa, sb;
  hpvm_rt_check(hpvm_rt_pipeline_add_stage(pipeline, "a", &stage, 1, NULL, 2, sizes, 1, sizes, &sa));
  hpvm_rt_check(hpvm_rt_pipeline_add_stage(pipeline, "b", &stage, 1, NULL, 1, sizes, 1, sizes, &sb));
  hpvm_rt_check(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, sa, 0));
  hpvm_rt_check(hpvm_rt_pipeline_connect(pipeline, sa, 0, sb, 0));
  row("`pipeline_connect(p, b, 0, a, 1)` closing a -> b -> a", hpvm_rt_pipeline_connect(pipeline, sb, 0, sa, 1));
  row("`pipeline_connect(p, a, 0, a, 1)` (self-loop)", hpvm_rt_pipeline_connect(pipeline, sa, 0, sa, 1));
  row("`pipeline_connect(p, a, 3, b, 0)` (no port 3)", hpvm_rt_pipeline_connect(pipeline, sa, 3, sb, 0));
  row("`pipeline_connect(p, HOST, 0, a, 0)` twice", hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, sa, 0));
  uint32_t sc;
  hpvm_rt_check(hpvm_rt_pipeline_add_stage(pipeline, "c", &stage, 1, NULL, 1, wide, 1, sizes, &sc));
  row("`pipeline_connect(p, b, 0, c, 0)` (4-byte items into an 8-byte port)", hpvm_rt_pipeline_connect(pipeline, sb, 0, sc, 0));
  hpvm_rt_stream_t *stream;
  row("`stream_launch(p)` with input 1 of a unfed", hpvm_rt_stream_launch(pipeline, &stream));
  hpvm_rt_pipeline_destroy(pipeline);
  hpvm_rt_check(hpvm_rt_pipeline_create(4, 4, 0, &pipeline));
  hpvm_rt_check(hpvm_rt_pipeline_connect(pipeline, HPVM_RT_PIPELINE_HOST, 0, HPVM_RT_PIPELINE_HOST, 0));
  hpvm_rt_check(hpvm_rt_stream_launch(pipeline, &stream));
  row("`pipeline_add_stage` after launch", hpvm_rt_pipeline_add_stage(pipeline, "d", &stage, 1, NULL, 1, sizes, 1, sizes, &sa));
  hpvm_rt_stream_close_input(stream);
  int item = 0;
  row("`stream_push` after `close_input`", hpvm_rt_stream_push(stream, &item));
  row("`stream_pop` at the end", hpvm_rt_stream_pop(stream, &item));
  hpvm_rt_check(hpvm_rt_stream_wait(stream));
  hpvm_rt_pipeline_destroy(pipeline);
  hpvm_rt_device_t *cuda;
  row("`device_get(CUDA)` without a driver", hpvm_rt_device_get(HPVM_RT_DEVICE_CUDA, &cuda));
  row("`device_get(7)`", hpvm_rt_device_get((hpvm_rt_device_kind_t)7, &cuda));
  row("`policy_set(9)`", hpvm_rt_policy_set((hpvm_rt_policy_kind_t)9));
  row("`policy_assign(\"a\", CUDA)` under the dynamic policy", hpvm_rt_policy_assign("a", HPVM_RT_DEVICE_CUDA));
  row("`module_load(cpu, image)`", hpvm_rt_module_load(cpu, &(hpvm_rt_module_image_t){HPVM_RT_IMAGE_PTX, "x", 1, NULL, 0}, &(hpvm_rt_module_t *){NULL}));
  row("`wait(NULL)`", hpvm_rt_wait(NULL));
  hpvm_rt_shutdown();
  return 0;
}
