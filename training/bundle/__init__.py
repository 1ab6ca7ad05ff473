"""Release: the runs of the stages as the engine's default models (`engine-train bundle`); the one
layer that reads the stages' outputs."""
