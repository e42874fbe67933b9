"""Approximation tuning for HPVM tensor graphs.

* `hpvm.approx.digits`: a small LeNet-like CNN trained in NumPy on scikit-learn's bundled
  digits (8x8 images), its trained weights shipped with the package, the exact NumPy
  inference and the same network as an `hpvm.TensorGraph` whose convolutions (`conv1`,
  `conv2`) the knob configurations name.
"""
