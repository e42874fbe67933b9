// cava_native.c - the release's hpvm-cava (src/main.c, unchanged) run natively.
//
// Built with -I <release>/hpvm-cava/src; the release's main runs as it is (load_cam_model.c,
// cam_pipe_utility.c and utility.c are compiled as they are). Graph (CamPipeRoot): seven
// one-instance wrappers in a chain, each creating a 1-D leaf of row_size instances:
// scale -> demosaic -> denoise -> transform -> gamut_map -> tone_map -> descale. The buffers
// come from the root's arguments as CamPipeRoot binds them (numbers are root argument
// positions); each leaf's bytes_input is the previous leaf's output 0 (an edge), all other
// ports are bound in. descale_fxp reads no instance id: each of its instances converts the
// whole image (the same values each time), and so does this driver.
#include "main.c"

#include "hpvm_native.h"

#include <stdio.h>
#include <stdlib.h>

static void set_row(size_t row, size_t rows) { hpvm_native_set(0, row, 0, 0, rows, 1, 1); }

static void run_cava(void *argsp, void *out) {
  (void)out;
  const RootIn *a = (const RootIn *)argsp;
  const size_t rows = a->row_size, cols = a->col_size;
  size_t edge;
  // ScNode: 0 -> input, 1 -> bytes_input, 4 -> result, 5 -> bytes_result, 28, 29
  for (size_t r = 0; r < rows; r++) {
    set_row(r, rows);
    scale_fxp(a->input, a->bytes_input, a->input_scaled, a->bytes_input_scaled, rows, cols);
  }
  edge = hpvm_native_output(0);
  // DmNode: 4 -> input, edge -> bytes_input, 8 -> result, 9 -> bytes_result
  for (size_t r = 0; r < rows; r++) {
    set_row(r, rows);
    demosaic_fxp(a->input_scaled, edge, a->demosaic_out, a->bytes_demosaic_out, rows, cols);
  }
  edge = hpvm_native_output(0);
  // DnNode: 8 -> input, edge, 10 -> result, 11 -> bytes_result
  for (size_t r = 0; r < rows; r++) {
    set_row(r, rows);
    denoise_fxp(a->demosaic_out, edge, a->denoise_out, a->bytes_denoise_out, rows, cols);
  }
  edge = hpvm_native_output(0);
  // TrNode: 10 -> input, edge, 12 -> result, 13 -> bytes_result, 16 -> TsTw, 17
  for (size_t r = 0; r < rows; r++) {
    set_row(r, rows);
    transform_fxp(a->denoise_out, edge, a->transform_out, a->bytes_transform_out, a->TsTw,
                  a->bytes_TsTw, rows, cols);
  }
  edge = hpvm_native_output(0);
  // GmNode: 12 -> input, edge, 14 -> result, 15, 18 -> ctrl_pts, 19, 20 -> weights, 21,
  // 22 -> coefs, 23, 24 -> l2_dist, 25
  for (size_t r = 0; r < rows; r++) {
    set_row(r, rows);
    gamut_map_fxp(a->transform_out, edge, a->gamut_out, a->bytes_gamut_out, a->ctrl_pts,
                  a->bytes_ctrl_pts, a->weights, a->bytes_weights, a->coefs, a->bytes_coefs,
                  a->l2_dist, a->bytes_l2_dist, rows, cols);
  }
  edge = hpvm_native_output(0);
  // TnNode: 14 -> input, edge, 6 -> result, 7, 26 -> tone_map, 27
  for (size_t r = 0; r < rows; r++) {
    set_row(r, rows);
    tone_map_fxp(a->gamut_out, edge, a->result_scaled, a->bytes_result_scaled, a->tone_map,
                 a->bytes_tone_map, rows, cols);
  }
  edge = hpvm_native_output(0);
  // DsNode: 6 -> input, edge, 2 -> result, 3 -> bytes_result
  for (size_t r = 0; r < rows; r++) {
    set_row(r, rows);
    descale_fxp(a->result_scaled, edge, a->result, a->bytes_result, rows, cols);
  }
  // tone_map_fxp converts gamut_out * 255 to uint8_t: undefined outside (-1, 256). The inputs
  // are made so that it does not happen; say so if it does (the builds may then differ).
  size_t undefined = 0;
  for (size_t i = 0; i < rows * cols * CHAN_SIZE; i++) {
    float x = a->gamut_out[i] * 255;
    if (!(x > -1.0f && x < 256.0f))
      undefined++;
  }
  if (undefined)
    fprintf(stderr, "cava_native: %zu gamut_out values outside (-1/255, 256/255): tone_map_fxp's "
                    "conversion of them to uint8_t is undefined behaviour\n", undefined);
}

/* The graph __hpvm__launch runs (hpvm_native.c). */
const hpvm_native_program hpvm_native_root = {
    "cava", (const void *)&CamPipeRoot, 0, run_cava, 0};
