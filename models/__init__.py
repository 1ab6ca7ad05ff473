"""Trained networks at play time: ONNX files, their contract, and the OnnxEvaluator (onnxruntime)."""
