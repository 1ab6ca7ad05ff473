"""Shared layer: the self-play workers (Ray actors, local processes or in-process) and the policy
self-play games they play."""
