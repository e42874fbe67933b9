// hpvm-apply-knobs: a JSON configuration sets (or, with "exact", removes) the
// hpvm.knob attribute of the tensor ops it names; a bad file changes nothing and
// every problem is reported with the entry's path.
// RUN: split-file %s %t
// RUN: hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/good.json" | FileCheck %s
// RUN: hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/good.json" --hpvm-fuse-tensor-nodes | FileCheck %s --check-prefix=FUSED
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/bad.json" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/syntax.json" 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/shape.json" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/array.json" 2>&1 | FileCheck %s --check-prefix=ARRAY
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs 2>&1 | FileCheck %s --check-prefix=NOFILE
// Hostile files: nested 50,000 deep (LLVM's recursive JSON parser overflowed the
// stack), and a key given twice in one entry (the last one won silently).
// RUN: %python -c "print('{\"knobs\": ' + '[' * 50000 + ']' * 50000 + '}')" > %t/deep.json
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/deep.json" 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: deep.json:1:1: error: nested deeper than 16 levels (at byte 25); a knob configuration is {"knobs": [{...}, ...]}
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/twice.json" 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: twice.json:1:1: error: key 'knob' appears twice in one object (at byte {{[0-9]+}}); expected each key once
// RUN: truncate -s 65M %t/huge.json
// RUN: not hpvm-opt %t/model.mlir --hpvm-apply-knobs="file=%t/huge.json" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: the knob configuration '{{.*}}huge.json' is 68157440 bytes; expected at most 67108864 bytes

// CHECK-LABEL: hpvm.leaf @conv1(
// CHECK: hpvm.tensor.conv2d {{.*}}hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>
// CHECK-LABEL: hpvm.leaf @bias1(
// CHECK-NOT: hpvm.knob
// CHECK-LABEL: hpvm.leaf @twice(
// CHECK: hpvm.tensor.conv2d %arg0, %arg1 :
// CHECK: hpvm.tensor.conv2d {{.*}}hpvm.knob = #hpvm.knob<sample_filter, rate = 4, offset = 3>
// CHECK-LABEL: hpvm.leaf @exact(
// CHECK-NOT: hpvm.knob
// CHECK: hpvm.return

// Reductions take sample_reduction: the leaf's only reduce without "op", by
// index, or by name ("reduce", the only one); "exact" alone finds the only
// conv2d or reduce.
// CHECK-LABEL: hpvm.leaf @total(
// CHECK: hpvm.tensor.reduce {{.*}} axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 1>}
// CHECK-LABEL: hpvm.leaf @stats(
// CHECK: hpvm.tensor.reduce {{.*}} axis 0 :
// CHECK: hpvm.tensor.reduce {{.*}} axis 0 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 4, offset = 0>}
// CHECK-LABEL: hpvm.leaf @mixed(
// CHECK: hpvm.tensor.conv2d {{.*}}hpvm.knob = #hpvm.knob<sample_filter, rate = 2, offset = 0>
// CHECK: hpvm.tensor.reduce {{.*}} axis 3 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 3, offset = 2>}
// CHECK-LABEL: hpvm.leaf @resampled(
// CHECK-NOT: hpvm.knob
// CHECK: hpvm.return

// Products take fp16 or bf16 (no rate or offset): the leaf's only mul.
// CHECK-LABEL: hpvm.leaf @fc(
// CHECK: hpvm.tensor.mul {{.*}} {hpvm.knob = #hpvm.knob<bf16>}
// CHECK-LABEL: hpvm.leaf @fc_relu(
// CHECK: hpvm.tensor.mul {{.*}} {hpvm.knob = #hpvm.knob<fp16>}

// Knobs are op attributes: they survive fusion, and the fused leaf keeps the
// strictest node budget of the chain.
// FUSED-LABEL: hpvm.leaf @conv1_bias1(
// FUSED-SAME: hpvm.error = #hpvm.error<l1 = 1.000000e-02, l2 = 3.000000e-02>
// FUSED: hpvm.tensor.conv2d {{.*}}hpvm.knob = #hpvm.knob<perforate_rows, rate = 2, offset = 1>
// FUSED: hpvm.tensor.add

// BAD-DAG: bad.json:1:1: error: knobs[0].node: no leaf named 'nowhere' in the module
// BAD-DAG: bad.json:1:1: error: knobs[1].node: 'root' is an internal node; knobs go to the leaves that hold tensor ops
// BAD-DAG: bad.json:1:1: error: knobs[2].knob: expected perforate_rows, perforate_cols, sample_filter, sample_reduction, fp16, bf16 or exact, found "dither"
// BAD-DAG: bad.json:1:1: error: knobs[3]: #hpvm.knob<perforate_cols> expects rate >= 2 (one element skipped in rate), found 1
// BAD-DAG: bad.json:1:1: error: knobs[4]: #hpvm.knob<sample_filter> expects 0 <= offset < rate (2), found 2
// BAD-DAG: bad.json:1:1: error: knobs[5]: 'twice' holds 2 hpvm.tensor.conv2d ops; say which with "op" (its index among the 2 tensor ops of the leaf)
// BAD-DAG: bad.json:1:1: error: knobs[6].op: 'twice' holds 2 tensor ops; expected an index from 0 to 1, found 2
// BAD-DAG: bad.json:1:1: error: knobs[7]: op 0 of 'bias1': #hpvm.knob<perforate_rows> applies to hpvm.tensor.conv2d only (perforate_rows, perforate_cols and sample_filter approximate convolutions), found on 'hpvm.tensor.add'
// BAD-DAG: bad.json:1:1: error: knobs[8]: unknown key "speed"; expected node, op, knob, rate and offset
// BAD-DAG: bad.json:1:1: error: knobs[9].rate: expected an integer, found a string
// BAD-DAG: bad.json:1:1: error: knobs[11]: configures op 0 of 'conv1' again (first in knobs[10])
// BAD-DAG: bad.json:1:1: error: knobs[12]: the exact knob takes no rate or offset
// BAD-DAG: bad.json:1:1: error: knobs[13].offset: expected an integer, found nothing
// BAD-DAG: bad.json:1:1: error: knobs[14]: expected an object {"node": ..., "knob": ...}, found a number
// BAD-DAG: bad.json:1:1: error: knobs[15].node: expected the name of a leaf (a string)
// BAD-DAG: bad.json:1:1: error: knobs[16]: op 0 of 'conv1': #hpvm.knob<sample_reduction> applies to hpvm.tensor.reduce only (it samples the elements a reduction combines), found on 'hpvm.tensor.conv2d'
// BAD-DAG: bad.json:1:1: error: knobs[17]: 'conv1' holds 0 hpvm.tensor.reduce ops; say which with "op" (its index among the 1 tensor ops of the leaf)
// BAD-DAG: bad.json:1:1: error: knobs[18]: 'stats' holds 2 hpvm.tensor.reduce ops; say which with "op" (its index among the 4 tensor ops of the leaf)
// BAD-DAG: bad.json:1:1: error: knobs[19].op: 'stats' holds 2 hpvm.tensor.reduce ops, expected one; name the op by its index among the 4 tensor ops of the leaf instead
// BAD-DAG: bad.json:1:1: error: knobs[20].op: 'total' holds 0 hpvm.tensor.pool ops, expected one; name the op by its index among the 1 tensor ops of the leaf instead
// BAD-DAG: bad.json:1:1: error: knobs[21].op: expected the index of a tensor op of the leaf or the name of its only op of a kind ("conv2d", "reduce"), found a boolean
// BAD-DAG: bad.json:1:1: error: knobs[22]: op 0 of 'product': #hpvm.knob<sample_reduction> expects a combiner that is one arith.addf, arith.maximumf, arith.minimumf, arith.maxnumf or arith.minnumf of the accumulator and the element, found 'arith.mulf'
// BAD-DAG: bad.json:1:1: error: knobs[23]: 'mixed' holds 2 hpvm.tensor.conv2d, hpvm.tensor.reduce or hpvm.tensor.mul ops; say which with "op" (its index among the 2 tensor ops of the leaf)
// BAD-DAG: bad.json:1:1: error: knobs[24]: #hpvm.knob<sample_reduction> expects 0 <= offset < rate (4), found -1
// BAD-DAG: bad.json:1:1: error: knobs[25]: op 1 of 'stats': #hpvm.knob<sample_reduction> applies to hpvm.tensor.reduce only (it samples the elements a reduction combines), found on 'hpvm.tensor.add'
// BAD-DAG: bad.json:1:1: error: knobs[26]: the fp16 knob takes no rate or offset (it changes the precision of the op's storage and skips nothing)
// BAD-DAG: bad.json:1:1: error: knobs[27]: 'conv1' holds 0 hpvm.tensor.mul ops; say which with "op" (its index among the 1 tensor ops of the leaf)
// BAD-DAG: bad.json:1:1: error: knobs[28]: op 0 of 'conv1': #hpvm.knob<bf16> applies to hpvm.tensor.mul only (half-precision storage of a product's operands), found on 'hpvm.tensor.conv2d'
// SYNTAX: syntax.json:1:1: error: expected JSON, found a syntax error: {{.*}}
// SHAPE-DAG: shape.json:1:1: error: unknown key "configs" at the top level; expected "knobs" (and optionally "info")
// SHAPE-DAG: shape.json:1:1: error: knobs: expected an array of entries, found nothing
// ARRAY: array.json:1:1: error: expected a JSON object with "knobs": [...], found an array
// MISSING: error: cannot read the knob configuration '{{.*}}missing.json': {{.*}}
// NOFILE: error: hpvm-apply-knobs expects a configuration file (file=<path>), found none

//--- model.mlir
hpvm.leaf @conv1(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<1x4x6x6xf32>)
    attributes {hpvm.error = #hpvm.error<l1 = 0.01, l2 = 0.05>} {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  hpvm.return %c : tensor<1x4x6x6xf32>
}
hpvm.leaf @bias1(%x: tensor<1x4x6x6xf32>, %b: tensor<1x4x1x1xf32>) -> (tensor<1x4x6x6xf32>)
    attributes {hpvm.error = #hpvm.error<l1 = 0.02, l2 = 0.03>} {
  %a = hpvm.tensor.add %x, %b : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  hpvm.return %a : tensor<1x4x6x6xf32>
}
hpvm.leaf @twice(%x: tensor<1x2x8x8xf32>, %w: tensor<2x2x3x3xf32>, %v: tensor<2x2x3x3xf32>)
    -> (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) {
  %a = hpvm.tensor.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  %b = hpvm.tensor.conv2d %x, %v : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  hpvm.return %a, %b : tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>
}
hpvm.leaf @exact(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<1x4x6x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {hpvm.knob = #hpvm.knob<perforate_cols, rate = 3, offset = 0>}
      : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  hpvm.return %c : tensor<1x4x6x6xf32>
}
hpvm.leaf @total(%x: tensor<3x7xf32>) -> (tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = hpvm.tensor.reduce %x, %zero axis 1 : (tensor<3x7xf32>, f32) -> tensor<3xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %s : tensor<3xf32>
}
hpvm.leaf @stats(%x: tensor<3x7xf32>, %lowest: f32) -> (tensor<7xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = hpvm.tensor.reduce %x, %zero axis 0 : (tensor<3x7xf32>, f32) -> tensor<7xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  %a = hpvm.tensor.add %s, %s : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %m = hpvm.tensor.reduce %x, %lowest axis 0 : (tensor<3x7xf32>, f32) -> tensor<7xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.maximumf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  %r = hpvm.tensor.add %a, %m : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  hpvm.return %r : tensor<7xf32>
}
hpvm.leaf @mixed(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<1x4x6xf32>) {
  %c = hpvm.tensor.conv2d %x, %w : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  %zero = arith.constant 0.0 : f32
  %s = hpvm.tensor.reduce %c, %zero axis 3 : (tensor<1x4x6x6xf32>, f32) -> tensor<1x4x6xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %e, %acc : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %s : tensor<1x4x6xf32>
}
hpvm.leaf @product(%x: tensor<3x7xf32>) -> (tensor<3xf32>) {
  %one = arith.constant 1.0 : f32
  %s = hpvm.tensor.reduce %x, %one axis 1 : (tensor<3x7xf32>, f32) -> tensor<3xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.mulf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %s : tensor<3xf32>
}
hpvm.leaf @resampled(%x: tensor<3x7xf32>) -> (tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = hpvm.tensor.reduce %x, %zero axis 1 {hpvm.knob = #hpvm.knob<sample_reduction, rate = 2, offset = 0>} : (tensor<3x7xf32>, f32) -> tensor<3xf32> {
  ^bb0(%acc: f32, %e: f32):
    %t = arith.addf %acc, %e : f32
    hpvm.tensor.yield %t : f32
  }
  hpvm.return %s : tensor<3xf32>
}
hpvm.leaf @fc(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x4xf32>) {
  %m = hpvm.tensor.mul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  hpvm.return %m : tensor<2x4xf32>
}
hpvm.leaf @fc_relu(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x4xf32>) {
  %m = hpvm.tensor.mul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %r = hpvm.tensor.relu %m : tensor<2x4xf32>
  hpvm.return %r : tensor<2x4xf32>
}
hpvm.internal @root(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<1x4x1x1xf32>)
    -> (tensor<1x4x6x6xf32>) {
  %c = hpvm.create_node @conv1 : !hpvm.node
  %a = hpvm.create_node @bias1 : !hpvm.node
  hpvm.bind_in %x -> %c[0] : tensor<1x2x8x8xf32>
  hpvm.bind_in %w -> %c[1] : tensor<4x2x3x3xf32>
  hpvm.edge %c[0] -> %a[0] one_to_one
  hpvm.bind_in %b -> %a[1] : tensor<1x4x1x1xf32>
  hpvm.bind_out %a[0] -> 0
}

//--- good.json
{
  "knobs": [
    {"node": "conv1", "knob": "perforate_rows", "rate": 2, "offset": 1},
    {"node": "twice", "op": 1, "knob": "sample_filter", "rate": 4, "offset": 3},
    {"node": "exact", "knob": "exact"},
    {"node": "total", "knob": "sample_reduction", "rate": 2, "offset": 1},
    {"node": "stats", "op": 2, "knob": "sample_reduction", "rate": 4, "offset": 0},
    {"node": "mixed", "op": "reduce", "knob": "sample_reduction", "rate": 3, "offset": 2},
    {"node": "mixed", "op": "hpvm.tensor.conv2d", "knob": "sample_filter", "rate": 2, "offset": 0},
    {"node": "resampled", "knob": "exact"},
    {"node": "fc", "knob": "bf16"},
    {"node": "fc_relu", "op": "mul", "knob": "fp16"}
  ],
  "info": {"speedup": 1.7, "note": "ignored by the pass"}
}

//--- bad.json
{"knobs": [
  {"node": "nowhere", "knob": "exact"},
  {"node": "root", "knob": "exact"},
  {"node": "conv1", "knob": "dither"},
  {"node": "conv1", "knob": "perforate_cols", "rate": 1, "offset": 0},
  {"node": "exact", "knob": "sample_filter", "rate": 2, "offset": 2},
  {"node": "twice", "knob": "perforate_rows", "rate": 2, "offset": 0},
  {"node": "twice", "op": 2, "knob": "perforate_rows", "rate": 2, "offset": 0},
  {"node": "bias1", "op": 0, "knob": "perforate_rows", "rate": 2, "offset": 0},
  {"node": "exact", "knob": "exact", "speed": 2},
  {"node": "exact", "knob": "perforate_rows", "rate": "two", "offset": 0},
  {"node": "conv1", "knob": "exact"},
  {"node": "conv1", "knob": "exact"},
  {"node": "exact", "knob": "exact", "rate": 2},
  {"node": "exact", "knob": "perforate_rows", "rate": 2},
  3,
  {"knob": "exact"},
  {"node": "conv1", "op": 0, "knob": "sample_reduction", "rate": 2, "offset": 0},
  {"node": "conv1", "knob": "sample_reduction", "rate": 2, "offset": 0},
  {"node": "stats", "knob": "sample_reduction", "rate": 2, "offset": 0},
  {"node": "stats", "op": "reduce", "knob": "sample_reduction", "rate": 2, "offset": 0},
  {"node": "total", "op": "pool", "knob": "sample_reduction", "rate": 2, "offset": 0},
  {"node": "total", "op": true, "knob": "sample_reduction", "rate": 2, "offset": 0},
  {"node": "product", "knob": "sample_reduction", "rate": 2, "offset": 0},
  {"node": "mixed", "knob": "exact"},
  {"node": "total", "knob": "sample_reduction", "rate": 4, "offset": -1},
  {"node": "stats", "op": 1, "knob": "sample_reduction", "rate": 2, "offset": 0},
  {"node": "fc", "knob": "fp16", "rate": 2, "offset": 0},
  {"node": "conv1", "knob": "bf16"},
  {"node": "conv1", "op": 0, "knob": "bf16"}
]}

//--- syntax.json
{"knobs": [ {"node": "conv1", } ]}

//--- shape.json
{"configs": []}

//--- array.json
[{"node": "conv1", "knob": "exact"}]

//--- twice.json
{"knobs": [{"node": "conv", "knob": "fp16", "knob": "exact"}]}
