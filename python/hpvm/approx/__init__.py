"""Approximation tuning for HPVM tensor graphs.

* `hpvm.approx.digits`: a LeNet-like CNN trained in NumPy on scikit-learn's bundled digits
  (8x8 images upsampled to 16x16), its trained weights shipped with the package, the exact
  NumPy inference and the same network as an `hpvm.TensorGraph` whose convolutions
  (`conv1`, `conv2`) the knob configurations name;
* `hpvm.approx.tuner`: the accuracy tuner (empirical and predictive modes);
* `hpvm.approx.tune`: the `hpvm-approx-tune` command (the table for the digits CNN).
"""
