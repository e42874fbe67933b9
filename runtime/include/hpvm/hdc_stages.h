/*===- hdc_stages.h - the HDC stage markers and loops (included by hdc.h) ----===*
 *
 * A stage marker (`__hetero_hdc_encoding(n, (void *)f, args...)`, _training,
 * _retraining, _inference, _similarity_check) is a call of f with args: in a task,
 * f's section becomes the task's graph. A loop launches its root over a data set:
 *
 *   __hetero_hdc_encoding_loop(n, root, N_VEC, N_CLASS, N_FEAT, STRIDE,
 *                              rp, rp_bytes, data, data_bytes, out, out_bytes)
 *   __hetero_hdc_inference_loop(n, root, N_VEC, N_FEAT, STRIDE,
 *                               rp, rp_bytes, data, data_bytes, classes, classes_bytes,
 *                               labels, labels_bytes, more buffer pairs...)
 *   __hetero_hdc_inference_loop(n, root, N_VEC, D, K, STRIDE, ...the same pairs)
 *   __hetero_hdc_training_loop(n, root, EPOCHS, N_VEC, N_FEAT, STRIDE,
 *                              rp, rp_bytes, data, data_bytes, classes, classes_bytes,
 *                              labels, labels_bytes, more buffer pairs...)
 *
 * Data point i starts STRIDE elements after data point i - 1. When `data_bytes` is
 * one data point (at most STRIDE elements), the root is launched once per data point
 * with that point (and, for the encoding loop, output row i of `out_bytes`; for
 * inference, `&labels[i]`; for training, the value `labels[i]`, each epoch in turn);
 * when it is more, the root of an encoding or inference loop takes the whole data set
 * and is launched once (training is always per data point: its root takes a label). `n`, HPVM's count of arguments, is not needed. The launches are the
 * program's own: hpvm-cc inlines these functions where they are called, so each loop
 * is host code that launches and waits for a constant root (in the sequential build,
 * calls it). The launches of the inference and training loops list no outputs: which
 * buffers a root outputs is its own tasks' business (HPVM's programs declare their
 * roots' outputs loosely), and on the CPU every node works in the host's memory.
 *===----------------------------------------------------------------------===*/
#ifndef HPVM_HDC_STAGES_H
#define HPVM_HDC_STAGES_H

namespace hpvm::hdc {

template <typename T> struct ElementOf { using type = T; };
template <int N, typename T> struct ElementOf<hypervector<N, T>> { using type = T; };
template <int M, int N, typename T> struct ElementOf<hypermatrix<M, N, T>> { using type = T; };

/* Data point i of a data set whose points start `stride` elements apart. */
template <typename D> inline D *point(D *data, long long i, long long stride) noexcept {
  using E = typename ElementOf<D>::type;
  return reinterpret_cast<D *>(reinterpret_cast<E *>(data) + i * stride);
}

/* Whether `bytes` hold more than one data point of `stride` elements. */
template <typename D> inline bool wholeDataSet(size_t bytes, long long stride) noexcept {
  return bytes > (size_t)stride * sizeof(typename ElementOf<D>::type);
}

template <typename... Pairs> constexpr int pairCount() {
  static_assert(sizeof...(Pairs) % 2 == 0,
                "the buffers after the labels are (pointer, size in bytes) pairs");
  return (int)(sizeof...(Pairs) / 2);
}

} // namespace hpvm::hdc

#define HPVM_HDC_STAGE(NAME)                                                                   \
  template <typename... Args> HPVM_HDC_INLINE void NAME(int, void *function, Args... args) noexcept { \
    reinterpret_cast<void (*)(Args...)>(function)(args...);                                   \
  }
HPVM_HDC_STAGE(__hetero_hdc_encoding)
HPVM_HDC_STAGE(__hetero_hdc_training)
HPVM_HDC_STAGE(__hetero_hdc_retraining)
HPVM_HDC_STAGE(__hetero_hdc_inference)
HPVM_HDC_STAGE(__hetero_hdc_similarity_check)
#undef HPVM_HDC_STAGE

template <typename R, typename D, typename O>
HPVM_HDC_INLINE void __hetero_hdc_encoding_loop(int, void *root, int points, int, int,
                                                int stride, R *rp, size_t rpBytes, D *data,
                                                size_t dataBytes, O *out,
                                                size_t outBytes) noexcept {
  if (hpvm::hdc::wholeDataSet<D>(dataBytes, stride)) {
    void *graph = __hetero_launch(root, 3, rp, rpBytes, data, dataBytes, out, outBytes, 1, out,
                                  outBytes);
    __hetero_wait(graph);
    return;
  }
  for (long long i = 0; i < points; ++i) {
    D *x = hpvm::hdc::point(data, i, stride);
    O *y = reinterpret_cast<O *>(reinterpret_cast<char *>(out) + i * (long long)outBytes);
    void *graph = __hetero_launch(root, 3, rp, rpBytes, x, dataBytes, y, outBytes, 1, y, outBytes);
    __hetero_wait(graph);
  }
}

/* Inference with the dimensions (N_VEC, N_FEAT, STRIDE) or (N_VEC, D, K, STRIDE). */
template <typename R, typename D, typename C, typename L, typename... Pairs>
HPVM_HDC_INLINE void __hetero_hdc_inference_loop_points(void *root, long long points, long long stride, R *rp,
                                          size_t rpBytes, D *data, size_t dataBytes,
                                          C *classes, size_t classesBytes, L *labels,
                                          size_t labelsBytes, Pairs... pairs) noexcept {
  constexpr int more = hpvm::hdc::pairCount<Pairs...>();
  if (hpvm::hdc::wholeDataSet<D>(dataBytes, stride)) {
    void *graph = __hetero_launch(root, 4 + more, rp, rpBytes, data, dataBytes, classes,
                                  classesBytes, labels, labelsBytes, pairs..., 0);
    __hetero_wait(graph);
    return;
  }
  for (long long i = 0; i < points; ++i) {
    D *x = hpvm::hdc::point(data, i, stride);
    void *graph = __hetero_launch(root, 4 + more, rp, rpBytes, x, dataBytes, classes,
                                  classesBytes, labels + i, sizeof(L), pairs..., 0);
    __hetero_wait(graph);
  }
}

template <typename R, typename D, typename C, typename L, typename... Pairs>
HPVM_HDC_INLINE void __hetero_hdc_inference_loop(int, void *root, int points, int, int stride,
                                                 R *rp, size_t rpBytes, D *data,
                                                 size_t dataBytes, C *classes,
                                                 size_t classesBytes, L *labels,
                                                 size_t labelsBytes, Pairs... pairs) noexcept {
  __hetero_hdc_inference_loop_points(root, points, stride, rp, rpBytes, data, dataBytes, classes, classesBytes,
                       labels, labelsBytes, pairs...);
}

template <typename R, typename D, typename C, typename L, typename... Pairs>
HPVM_HDC_INLINE void __hetero_hdc_inference_loop(int, void *root, int points, int, int,
                                                 int stride, R *rp, size_t rpBytes, D *data,
                                                 size_t dataBytes, C *classes,
                                                 size_t classesBytes, L *labels,
                                                 size_t labelsBytes, Pairs... pairs) noexcept {
  __hetero_hdc_inference_loop_points(root, points, stride, rp, rpBytes, data, dataBytes, classes, classesBytes,
                       labels, labelsBytes, pairs...);
}

template <typename R, typename D, typename C, typename L, typename... Pairs>
HPVM_HDC_INLINE void __hetero_hdc_training_loop(int, void *root, int epochs, int points, int,
                                                int stride, R *rp, size_t rpBytes, D *data,
                                                size_t dataBytes, C *classes,
                                                size_t classesBytes, L *labels,
                                                size_t labelsBytes, Pairs... pairs) noexcept {
  constexpr int more = hpvm::hdc::pairCount<Pairs...>();
  for (int epoch = 0; epoch < epochs; ++epoch) {
    for (long long i = 0; i < points; ++i) {
      D *x = hpvm::hdc::point(data, i, stride);
      L label = labels[i];
      void *graph = __hetero_launch(root, 4 + more, rp, rpBytes, x, dataBytes, classes,
                                    classesBytes, label, pairs..., 0);
      __hetero_wait(graph);
    }
  }
}

#endif /* HPVM_HDC_STAGES_H */
