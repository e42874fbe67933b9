// One convolution layer of LeNet in tensor ops, with an error budget the
// accuracy tuner may spend on the convolution, then a classifier leaf.

hpvm.leaf @conv_layer(%x: tensor<1x1x28x28xf32>, %w: tensor<8x1x3x3xf32>,
                      %b: tensor<1x8x1x1xf32>) -> (tensor<1x8x13x13xf32>)
    attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %c = hpvm.tensor.conv2d %x, %w {padding = [0, 0], strides = [1, 1],
         error = #hpvm.error<l1 = 0.01, l2 = 0.02>}
         : (tensor<1x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x26x26xf32>
  %a = hpvm.tensor.add %c, %b
         : (tensor<1x8x26x26xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x26x26xf32>
  %r = hpvm.tensor.relu %a : tensor<1x8x26x26xf32>
  %p = hpvm.tensor.pool max %r {window = [2, 2], strides = [2, 2], padding = [0, 0]}
         : tensor<1x8x26x26xf32> -> tensor<1x8x13x13xf32>
  hpvm.return %p : tensor<1x8x13x13xf32>
}

hpvm.leaf @classifier(%features: tensor<1x1352xf32>, %w: tensor<1352x10xf32>)
    -> (tensor<1x10xf32>) attributes {hpvm.targets = [#hpvm.target<tensor>]} {
  %logits = hpvm.tensor.mul %features, %w
         : (tensor<1x1352xf32>, tensor<1352x10xf32>) -> tensor<1x10xf32>
  %p = hpvm.tensor.softmax %logits {axis = 1} : tensor<1x10xf32>
  hpvm.return %p : tensor<1x10xf32>
}

hpvm.internal @lenet(%x: tensor<1x1x28x28xf32>, %w: tensor<8x1x3x3xf32>,
                     %b: tensor<1x8x1x1xf32>) -> (tensor<1x8x13x13xf32>) {
  %conv = hpvm.create_node @conv_layer : !hpvm.node
  hpvm.bind_in %x -> %conv[0] : tensor<1x1x28x28xf32>
  hpvm.bind_in %w -> %conv[1] : tensor<8x1x3x3xf32>
  hpvm.bind_in %b -> %conv[2] : tensor<1x8x1x1xf32>
  hpvm.bind_out %conv[0] -> 0
}
