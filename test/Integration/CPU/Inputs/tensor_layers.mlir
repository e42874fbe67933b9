// A small network in one-op tensor leaves (the unfused form a frontend emits):
// conv2d (padded) -> add -> relu -> pool max, and mul -> add -> tanh -> softmax,
// launched from a host function on memrefs. Used by tensor-layers.test.
hpvm.leaf @conv(%x: tensor<1x1x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> (tensor<1x4x8x8xf32>) {
  %c = hpvm.tensor.conv2d %x, %w {padding = [1, 1], strides = [1, 1],
         error = #hpvm.error<l1 = 0.01, l2 = 0.02>}
         : (tensor<1x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
  hpvm.return %c : tensor<1x4x8x8xf32>
}
hpvm.leaf @bias(%c: tensor<1x4x8x8xf32>, %b: tensor<1x4x1x1xf32>) -> (tensor<1x4x8x8xf32>) {
  %a = hpvm.tensor.add %c, %b : (tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  hpvm.return %a : tensor<1x4x8x8xf32>
}
hpvm.leaf @relu(%a: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>) {
  %r = hpvm.tensor.relu %a : tensor<1x4x8x8xf32>
  hpvm.return %r : tensor<1x4x8x8xf32>
}
hpvm.leaf @pool(%r: tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>) {
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2], padding = [0, 0]}
         : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  hpvm.return %p : tensor<1x4x4x4xf32>
}
hpvm.leaf @dense(%f: tensor<2x16xf32>, %m: tensor<16x10xf32>) -> (tensor<2x10xf32>) {
  %y = hpvm.tensor.mul %f, %m : (tensor<2x16xf32>, tensor<16x10xf32>) -> tensor<2x10xf32>
  hpvm.return %y : tensor<2x10xf32>
}
hpvm.leaf @dense_bias(%y: tensor<2x10xf32>, %mb: tensor<1x10xf32>) -> (tensor<2x10xf32>) {
  %a = hpvm.tensor.add %y, %mb : (tensor<2x10xf32>, tensor<1x10xf32>) -> tensor<2x10xf32>
  hpvm.return %a : tensor<2x10xf32>
}
hpvm.leaf @squash(%a: tensor<2x10xf32>) -> (tensor<2x10xf32>) {
  %t = hpvm.tensor.tanh %a : tensor<2x10xf32>
  hpvm.return %t : tensor<2x10xf32>
}
hpvm.leaf @classes(%t: tensor<2x10xf32>) -> (tensor<2x10xf32>) {
  %s = hpvm.tensor.softmax %t {axis = 1} : tensor<2x10xf32>
  hpvm.return %s : tensor<2x10xf32>
}
hpvm.internal @net(%x: tensor<1x1x8x8xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<1x4x1x1xf32>,
                   %f: tensor<2x16xf32>, %m: tensor<16x10xf32>, %mb: tensor<1x10xf32>)
    -> (tensor<1x4x4x4xf32>, tensor<2x10xf32>) {
  %conv = hpvm.create_node @conv : !hpvm.node
  %bias = hpvm.create_node @bias : !hpvm.node
  %relu = hpvm.create_node @relu : !hpvm.node
  %pool = hpvm.create_node @pool : !hpvm.node
  hpvm.bind_in %x -> %conv[0] : tensor<1x1x8x8xf32>
  hpvm.bind_in %w -> %conv[1] : tensor<4x1x3x3xf32>
  hpvm.edge %conv[0] -> %bias[0] one_to_one
  hpvm.bind_in %b -> %bias[1] : tensor<1x4x1x1xf32>
  hpvm.edge %bias[0] -> %relu[0] one_to_one
  hpvm.edge %relu[0] -> %pool[0] one_to_one
  hpvm.bind_out %pool[0] -> 0
  %dense = hpvm.create_node @dense : !hpvm.node
  %dense_bias = hpvm.create_node @dense_bias : !hpvm.node
  %squash = hpvm.create_node @squash : !hpvm.node
  %classes = hpvm.create_node @classes : !hpvm.node
  hpvm.bind_in %f -> %dense[0] : tensor<2x16xf32>
  hpvm.bind_in %m -> %dense[1] : tensor<16x10xf32>
  hpvm.edge %dense[0] -> %dense_bias[0] one_to_one
  hpvm.bind_in %mb -> %dense_bias[1] : tensor<1x10xf32>
  hpvm.edge %dense_bias[0] -> %squash[0] one_to_one
  hpvm.edge %squash[0] -> %classes[0] one_to_one
  hpvm.bind_out %classes[0] -> 1
}
func.func @run(%x: memref<1x1x8x8xf32>, %w: memref<4x1x3x3xf32>, %b: memref<1x4x1x1xf32>,
               %f: memref<2x16xf32>, %m: memref<16x10xf32>, %mb: memref<1x10xf32>,
               %out: memref<1x4x4x4xf32>, %probabilities: memref<2x10xf32>) {
  %xt = bufferization.to_tensor %x restrict : memref<1x1x8x8xf32> to tensor<1x1x8x8xf32>
  %wt = bufferization.to_tensor %w restrict : memref<4x1x3x3xf32> to tensor<4x1x3x3xf32>
  %bt = bufferization.to_tensor %b restrict : memref<1x4x1x1xf32> to tensor<1x4x1x1xf32>
  %ft = bufferization.to_tensor %f restrict : memref<2x16xf32> to tensor<2x16xf32>
  %mt = bufferization.to_tensor %m restrict : memref<16x10xf32> to tensor<16x10xf32>
  %mbt = bufferization.to_tensor %mb restrict : memref<1x10xf32> to tensor<1x10xf32>
  %g = hpvm.launch @net(%xt, %wt, %bt, %ft, %mt, %mbt)
      : (tensor<1x1x8x8xf32>, tensor<4x1x3x3xf32>, tensor<1x4x1x1xf32>, tensor<2x16xf32>,
         tensor<16x10xf32>, tensor<1x10xf32>) -> !hpvm.graph
  %features, %classes = hpvm.wait %g : tensor<1x4x4x4xf32>, tensor<2x10xf32>
  bufferization.materialize_in_destination %features in restrict writable %out
      : (tensor<1x4x4x4xf32>, memref<1x4x4x4xf32>) -> ()
  bufferization.materialize_in_destination %classes in restrict writable %probabilities
      : (tensor<2x10xf32>, memref<2x10xf32>) -> ()
  return
}
