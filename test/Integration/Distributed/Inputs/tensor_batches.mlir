// A stream of tensor batches through a small CNN, in tensor ops: each item is a batch of two
// 8x8 images (a view of the host's array of all images) with the weights; the result is the
// batch's class probabilities, a tensor the graph allocates and the host frees after copying
// it out. features: conv2d 3x3 (padded) -> add (bias) -> relu -> pool max 2x2; classify:
// flatten -> mul -> add (bias) -> softmax. Host: tensor_batches_host.c.
hpvm.leaf @features(%x: tensor<2x1x8x8xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<1x4x1x1xf32>)
    -> (tensor<2x4x4x4xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1]}
         : (tensor<2x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32>
  %a = hpvm.tensor.add %c, %b
         : (tensor<2x4x8x8xf32>, tensor<1x4x1x1xf32>) -> tensor<2x4x8x8xf32>
  %r = hpvm.tensor.relu %a : tensor<2x4x8x8xf32>
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2], padding = [0, 0]}
         : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  hpvm.return %p : tensor<2x4x4x4xf32>
}
hpvm.leaf @classify(%f: tensor<2x4x4x4xf32>, %m: tensor<64x10xf32>, %mb: tensor<1x10xf32>)
    -> (tensor<2x10xf32>) {
  %flat = tensor.collapse_shape %f [[0], [1, 2, 3]] : tensor<2x4x4x4xf32> into tensor<2x64xf32>
  %y = hpvm.tensor.mul %flat, %m : (tensor<2x64xf32>, tensor<64x10xf32>) -> tensor<2x10xf32>
  %a = hpvm.tensor.add %y, %mb : (tensor<2x10xf32>, tensor<1x10xf32>) -> tensor<2x10xf32>
  %s = hpvm.tensor.softmax %a {axis = 1} : tensor<2x10xf32>
  hpvm.return %s : tensor<2x10xf32>
}
hpvm.internal @net(%x: tensor<2x1x8x8xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<1x4x1x1xf32>,
                   %m: tensor<64x10xf32>, %mb: tensor<1x10xf32>) -> (tensor<2x10xf32>) {
  %f = hpvm.create_node @features : !hpvm.node
  %c = hpvm.create_node @classify : !hpvm.node
  hpvm.bind_in %x -> %f[0] streaming : tensor<2x1x8x8xf32>
  hpvm.bind_in %w -> %f[1] streaming : tensor<4x1x3x3xf32>
  hpvm.bind_in %b -> %f[2] streaming : tensor<1x4x1x1xf32>
  hpvm.edge %f[0] -> %c[0] all_to_all streaming
  hpvm.bind_in %m -> %c[1] streaming : tensor<64x10xf32>
  hpvm.bind_in %mb -> %c[2] streaming : tensor<1x10xf32>
  hpvm.bind_out %c[0] -> 0 streaming
}

// Batch k holds images 2k and 2k + 1 of %xs; its probabilities go to rows 2k and 2k + 1 of
// %out. Every batch is pushed (the launch's arguments are the first), then every result
// popped.
func.func @run(%xs: memref<?x1x8x8xf32>, %w: memref<4x1x3x3xf32>, %b: memref<1x4x1x1xf32>,
               %m: memref<64x10xf32>, %mb: memref<1x10xf32>, %out: memref<?x10xf32>,
               %batches: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %wt = bufferization.to_tensor %w restrict : memref<4x1x3x3xf32> to tensor<4x1x3x3xf32>
  %bt = bufferization.to_tensor %b restrict : memref<1x4x1x1xf32> to tensor<1x4x1x1xf32>
  %mt = bufferization.to_tensor %m restrict : memref<64x10xf32> to tensor<64x10xf32>
  %mbt = bufferization.to_tensor %mb restrict : memref<1x10xf32> to tensor<1x10xf32>
  %x0 = memref.subview %xs[0, 0, 0, 0] [2, 1, 8, 8] [1, 1, 1, 1]
      : memref<?x1x8x8xf32> to memref<2x1x8x8xf32, strided<[64, 64, 8, 1]>>
  %x0t = bufferization.to_tensor %x0 restrict
      : memref<2x1x8x8xf32, strided<[64, 64, 8, 1]>> to tensor<2x1x8x8xf32>
  %s = hpvm.launch @net(%x0t, %wt, %bt, %mt, %mbt) streaming
      : (tensor<2x1x8x8xf32>, tensor<4x1x3x3xf32>, tensor<1x4x1x1xf32>, tensor<64x10xf32>,
         tensor<1x10xf32>) -> !hpvm.graph
  scf.for %k = %c1 to %batches step %c1 {
    %first = arith.muli %k, %c2 : index
    %xk = memref.subview %xs[%first, 0, 0, 0] [2, 1, 8, 8] [1, 1, 1, 1]
        : memref<?x1x8x8xf32> to memref<2x1x8x8xf32, strided<[64, 64, 8, 1], offset: ?>>
    %xkt = bufferization.to_tensor %xk restrict
        : memref<2x1x8x8xf32, strided<[64, 64, 8, 1], offset: ?>> to tensor<2x1x8x8xf32>
    hpvm.push %s(%xkt, %wt, %bt, %mt, %mbt)
        : tensor<2x1x8x8xf32>, tensor<4x1x3x3xf32>, tensor<1x4x1x1xf32>, tensor<64x10xf32>,
          tensor<1x10xf32>
  }
  scf.for %k = %c0 to %batches step %c1 {
    %p = hpvm.pop %s : tensor<2x10xf32>
    %first = arith.muli %k, %c2 : index
    %ok = memref.subview %out[%first, 0] [2, 10] [1, 1]
        : memref<?x10xf32> to memref<2x10xf32, strided<[10, 1], offset: ?>>
    bufferization.materialize_in_destination %p in restrict writable %ok
        : (tensor<2x10xf32>, memref<2x10xf32, strided<[10, 1], offset: ?>>) -> ()
  }
  hpvm.wait %s
  return
}
