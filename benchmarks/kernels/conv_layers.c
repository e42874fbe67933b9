// conv_layers.c - the convolutions of whole models, layer by layer: the runtime's kernels
// (hpvm_rt_tensor_conv2d_constant_f32, what a compiled graph calls for a constant filter)
// against oneDNN's (the library inside PyTorch's and OpenVINO's CPU paths), each in a process of
// its own (run_conv.sh alternates them).
//
//   ./conv_layers hpvm   SET RUNS     NCHW in and out, the filter packed once
//   ./conv_layers onednn SET RUNS     (built with -DHAVE_DNNL) oneDNN's convolution with the
//                                     layouts it picks (channels blocked, as libraries keep
//                                     activations between layers), and the same with the
//                                     reorders from and to NCHW around it
//
// SET: resnet18, resnet50 or mobilenet_v2 (batch 1, 224 x 224; every distinct shape once, bias
// and ReLU). Each layer: RUNS timed calls after 3 warm-up calls, the median in ms and GFLOP/s.
// Threads: HPVM_NUM_THREADS for hpvm, OMP_NUM_THREADS for oneDNN.
#include "hpvm/hpvm_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef HAVE_DNNL
#include <dnnl.h>
#endif

typedef struct layer_t {
  const char *name;
  int64_t c, h, f, k, s, p, g; // input channels, input size (square), filters, window, stride,
                               // padding, groups
} layer_t;

static const layer_t resnet18[] = {
    {"conv1 7x7/2", 3, 224, 64, 7, 2, 3, 1},      {"layer1 3x3", 64, 56, 64, 3, 1, 1, 1},
    {"layer2.0 3x3/2", 64, 56, 128, 3, 2, 1, 1},  {"layer2 3x3", 128, 28, 128, 3, 1, 1, 1},
    {"layer2 down 1x1/2", 64, 56, 128, 1, 2, 0, 1}, {"layer3.0 3x3/2", 128, 28, 256, 3, 2, 1, 1},
    {"layer3 3x3", 256, 14, 256, 3, 1, 1, 1},     {"layer3 down 1x1/2", 128, 28, 256, 1, 2, 0, 1},
    {"layer4.0 3x3/2", 256, 14, 512, 3, 2, 1, 1}, {"layer4 3x3", 512, 7, 512, 3, 1, 1, 1},
    {"layer4 down 1x1/2", 256, 14, 512, 1, 2, 0, 1}};
static const layer_t resnet50[] = {
    {"layer1 1x1 in", 64, 56, 64, 1, 1, 0, 1},      {"layer1 3x3", 64, 56, 64, 3, 1, 1, 1},
    {"layer1 1x1 out", 64, 56, 256, 1, 1, 0, 1},    {"layer1 1x1 back", 256, 56, 64, 1, 1, 0, 1},
    {"layer2 1x1 in", 512, 28, 128, 1, 1, 0, 1},    {"layer2 3x3", 128, 28, 128, 3, 1, 1, 1},
    {"layer2 1x1 out", 128, 28, 512, 1, 1, 0, 1},   {"layer3 1x1 in", 1024, 14, 256, 1, 1, 0, 1},
    {"layer3 3x3", 256, 14, 256, 3, 1, 1, 1},       {"layer3 1x1 out", 256, 14, 1024, 1, 1, 0, 1},
    {"layer4 1x1 in", 2048, 7, 512, 1, 1, 0, 1},    {"layer4 3x3", 512, 7, 512, 3, 1, 1, 1},
    {"layer4 1x1 out", 512, 7, 2048, 1, 1, 0, 1},
    {"layer4 down 1x1/2", 1024, 14, 2048, 1, 2, 0, 1}};
static const layer_t mobilenet_v2[] = {
    {"conv 3x3/2", 3, 224, 32, 3, 2, 1, 1},         {"dw 3x3 112", 32, 112, 32, 3, 1, 1, 32},
    {"1x1 32->16", 32, 112, 16, 1, 1, 0, 1},        {"1x1 16->96", 16, 112, 96, 1, 1, 0, 1},
    {"dw 3x3/2 112", 96, 112, 96, 3, 2, 1, 96},     {"1x1 96->24", 96, 56, 24, 1, 1, 0, 1},
    {"1x1 24->144", 24, 56, 144, 1, 1, 0, 1},       {"dw 3x3 56", 144, 56, 144, 3, 1, 1, 144},
    {"1x1 144->24", 144, 56, 24, 1, 1, 0, 1},       {"1x1 192->64 14", 384, 14, 64, 1, 1, 0, 1},
    {"1x1 64->384 14", 64, 14, 384, 1, 1, 0, 1},    {"dw 3x3 14", 384, 14, 384, 3, 1, 1, 384},
    {"1x1 160->960 7", 160, 7, 960, 1, 1, 0, 1},    {"dw 3x3 7", 960, 7, 960, 3, 1, 1, 960},
    {"1x1 960->160 7", 960, 7, 160, 1, 1, 0, 1},    {"1x1 320->1280 7", 320, 7, 1280, 1, 1, 0, 1}};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static float *random_floats(int64_t count) {
  float *p = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  if (!p) {
    fprintf(stderr, "conv_layers: out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < count; ++i)
    p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  return p;
}

static int64_t out_size(const layer_t *l) { return (l->h + 2 * l->p - l->k) / l->s + 1; }

static double flops(const layer_t *l) {
  int64_t o = out_size(l);
  return 2.0 * l->f * o * o * (l->c / l->g) * l->k * l->k;
}

// The median of `runs` timed calls of `call(context)` after 3 warm-up calls.
static double median_ms(void (*call)(void *), void *context, int runs) {
  double *t = malloc(sizeof(double) * (size_t)runs);
  for (int r = 0; r < 3; ++r)
    call(context);
  for (int r = 0; r < runs; ++r) {
    double t0 = now();
    call(context);
    t[r] = now() - t0;
  }
  qsort(t, (size_t)runs, sizeof(double), compare);
  double m = t[runs / 2] * 1e3;
  free(t);
  return m;
}

typedef struct hpvm_call_t {
  const layer_t *l;
  float *input, *filter, *bias, *output;
} hpvm_call_t;

static void hpvm_conv(void *context) {
  const hpvm_call_t *c = context;
  const layer_t *l = c->l;
  int64_t o = out_size(l);
  hpvm_rt_tensor_conv2d_constant_f32(c->input, c->filter, c->bias, c->output, 1, l->c, l->h, l->h,
                                     l->f, l->k, l->k, o, o, l->p, l->p, l->s, l->s, l->g,
                                     HPVM_RT_TENSOR_RELU, 0.0);
}

static void run_hpvm(const layer_t *layers, int count, int runs) {
  for (int i = 0; i < count; ++i) {
    const layer_t *l = &layers[i];
    int64_t o = out_size(l);
    hpvm_call_t c = {l, random_floats(l->c * l->h * l->h),
                     random_floats(l->f * (l->c / l->g) * l->k * l->k), random_floats(l->f),
                     random_floats(l->f * o * o)};
    double ms = median_ms(hpvm_conv, &c, runs);
    printf("hpvm   %-20s %8.3f ms %7.1f GFLOP/s\n", l->name, ms, flops(l) / ms / 1e6);
    // The filter stays allocated: its packed form is keyed by its address (constants.c).
    free(c.input);
    free(c.output);
  }
}

#ifdef HAVE_DNNL
#define DNNL_CHECK(call)                                                                          \
  do {                                                                                            \
    dnnl_status_t s_ = (call);                                                                    \
    if (s_ != dnnl_success) {                                                                     \
      fprintf(stderr, "conv_layers: %s failed (%d)\n", #call, (int)s_);                           \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

typedef struct dnnl_call_t {
  dnnl_stream_t stream;
  dnnl_primitive_t conv, to_blocked, to_nchw;
  dnnl_memory_t src_nchw, src, weights, bias, dst, dst_nchw;
  int reorders;
} dnnl_call_t;

static void dnnl_conv(void *context) {
  dnnl_call_t *c = context;
  if (c->reorders) {
    dnnl_exec_arg_t in[2] = {{DNNL_ARG_FROM, c->src_nchw}, {DNNL_ARG_TO, c->src}};
    DNNL_CHECK(dnnl_primitive_execute(c->to_blocked, c->stream, 2, in));
  }
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_WEIGHTS, c->weights},
                             {DNNL_ARG_BIAS, c->bias}, {DNNL_ARG_DST, c->dst}};
  DNNL_CHECK(dnnl_primitive_execute(c->conv, c->stream, 4, args));
  if (c->reorders) {
    dnnl_exec_arg_t out[2] = {{DNNL_ARG_FROM, c->dst}, {DNNL_ARG_TO, c->dst_nchw}};
    DNNL_CHECK(dnnl_primitive_execute(c->to_nchw, c->stream, 2, out));
  }
  DNNL_CHECK(dnnl_stream_wait(c->stream));
}

// A reorder primitive from `from` to `to`.
static dnnl_primitive_t reorder(dnnl_engine_t engine, const dnnl_memory_desc_t *from,
                                const dnnl_memory_desc_t *to) {
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t p;
  DNNL_CHECK(dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine, NULL));
  DNNL_CHECK(dnnl_primitive_create(&p, pd));
  DNNL_CHECK(dnnl_primitive_desc_destroy(pd));
  return p;
}

// The convolution's primitive for layer l with the layouts oneDNN picks, bias and ReLU.
static dnnl_primitive_desc_t conv_desc(dnnl_engine_t engine, const layer_t *l) {
  int64_t o = out_size(l);
  dnnl_dims_t src = {1, l->c, l->h, l->h}, dst = {1, l->f, o, o}, bias = {l->f};
  dnnl_dims_t strides = {l->s, l->s}, pad = {l->p, l->p};
  dnnl_memory_desc_t src_md, weights_md, bias_md, dst_md;
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&src_md, 4, src, dnnl_f32, dnnl_format_tag_any));
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst, dnnl_f32, dnnl_format_tag_any));
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bias_md, 1, bias, dnnl_f32, dnnl_x));
  if (l->g > 1) {
    dnnl_dims_t w = {l->g, l->f / l->g, l->c / l->g, l->k, l->k};
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&weights_md, 5, w, dnnl_f32, dnnl_format_tag_any));
  } else {
    dnnl_dims_t w = {l->f, l->c, l->k, l->k};
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&weights_md, 4, w, dnnl_f32, dnnl_format_tag_any));
  }
  dnnl_convolution_desc_t cd;
  DNNL_CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                dnnl_convolution_direct, &src_md, &weights_md,
                                                &bias_md, &dst_md, strides, pad, pad));
  dnnl_post_ops_t post;
  dnnl_primitive_attr_t attr;
  DNNL_CHECK(dnnl_post_ops_create(&post));
  DNNL_CHECK(dnnl_post_ops_append_eltwise(post, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
  DNNL_CHECK(dnnl_primitive_attr_create(&attr));
  DNNL_CHECK(dnnl_primitive_attr_set_post_ops(attr, post));
  dnnl_primitive_desc_t pd;
  DNNL_CHECK(dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL));
  DNNL_CHECK(dnnl_post_ops_destroy(post));
  DNNL_CHECK(dnnl_primitive_attr_destroy(attr));
  return pd;
}

static dnnl_memory_t memory(dnnl_engine_t engine, const dnnl_memory_desc_t *md, void *data) {
  dnnl_memory_t m;
  DNNL_CHECK(dnnl_memory_create(&m, md, engine, data ? data : DNNL_MEMORY_ALLOCATE));
  return m;
}

static void run_onednn(const layer_t *layers, int count, int runs) {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  DNNL_CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
  DNNL_CHECK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
  for (int i = 0; i < count; ++i) {
    const layer_t *l = &layers[i];
    int64_t o = out_size(l);
    dnnl_primitive_desc_t pd = conv_desc(engine, l);
    dnnl_call_t c = {stream, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0};
    DNNL_CHECK(dnnl_primitive_create(&c.conv, pd));
    const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *w_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *b_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1);
    dnnl_memory_desc_t nchw_src, nchw_dst;
    dnnl_dims_t src_dims = {1, l->c, l->h, l->h}, dst_dims = {1, l->f, o, o};
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&nchw_src, 4, src_dims, dnnl_f32, dnnl_nchw));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&nchw_dst, 4, dst_dims, dnnl_f32, dnnl_nchw));
    float *input = random_floats(l->c * l->h * l->h);
    c.src_nchw = memory(engine, &nchw_src, input);
    c.dst_nchw = memory(engine, &nchw_dst, NULL);
    c.src = memory(engine, src_md, NULL);
    c.dst = memory(engine, dst_md, NULL);
    c.weights = memory(engine, w_md, NULL); // random contents: the speed does not depend on them
    c.bias = memory(engine, b_md, NULL);
    c.to_blocked = reorder(engine, &nchw_src, src_md);
    c.to_nchw = reorder(engine, dst_md, &nchw_dst);
    dnnl_call_t blocked = c;
    double ms_blocked = median_ms(dnnl_conv, &blocked, runs);
    c.reorders = 1;
    double ms_nchw = median_ms(dnnl_conv, &c, runs);
    printf("onednn %-20s %8.3f ms %7.1f GFLOP/s   with NCHW reorders %8.3f ms %7.1f GFLOP/s\n",
           l->name, ms_blocked, flops(l) / ms_blocked / 1e6, ms_nchw, flops(l) / ms_nchw / 1e6);
    dnnl_primitive_destroy(c.conv);
    dnnl_primitive_destroy(c.to_blocked);
    dnnl_primitive_destroy(c.to_nchw);
    dnnl_memory_destroy(c.src_nchw);
    dnnl_memory_destroy(c.dst_nchw);
    dnnl_memory_destroy(c.src);
    dnnl_memory_destroy(c.dst);
    dnnl_memory_destroy(c.weights);
    dnnl_memory_destroy(c.bias);
    dnnl_primitive_desc_destroy(pd);
    free(input);
  }
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);
}
#endif

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: conv_layers hpvm|onednn resnet18|resnet50|mobilenet_v2 RUNS\n");
    return 2;
  }
  const layer_t *layers = NULL;
  int count = 0;
  if (!strcmp(argv[2], "resnet18"))
    layers = resnet18, count = (int)(sizeof resnet18 / sizeof resnet18[0]);
  else if (!strcmp(argv[2], "resnet50"))
    layers = resnet50, count = (int)(sizeof resnet50 / sizeof resnet50[0]);
  else if (!strcmp(argv[2], "mobilenet_v2"))
    layers = mobilenet_v2, count = (int)(sizeof mobilenet_v2 / sizeof mobilenet_v2[0]);
  int runs = atoi(argv[3]);
  if (!layers || runs <= 0) {
    fprintf(stderr, "conv_layers: expected a set (resnet18, resnet50, mobilenet_v2) and a "
                    "positive count of runs, got '%s' and '%s'\n", argv[2], argv[3]);
    return 2;
  }
  srand(7);
  if (!strcmp(argv[1], "hpvm")) {
    run_hpvm(layers, count, runs);
    return 0;
  }
#ifdef HAVE_DNNL
  if (!strcmp(argv[1], "onednn")) {
    run_onednn(layers, count, runs);
    return 0;
  }
#endif
  fprintf(stderr, "conv_layers: unknown or unavailable side '%s' (hpvm, onednn)\n", argv[1]);
  return 2;
}
