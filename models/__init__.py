"""Trained networks at play time: ONNX files, their contract, the OnnxEvaluator (onnxruntime)."""
