"""The steps of the DNN check (dnn_check.py drives them): program (the parsed program and its
shapes), parse (the release source into a program), data (seeded weights, inputs and labels in
the release's format, calibrated batchnorms), network (the network in NumPy), reference (the
ONNX model and its onnxruntime session), running (hpvm-cc and the compiled program) and compare
(hpvm against onnxruntime, and both against float64)."""
