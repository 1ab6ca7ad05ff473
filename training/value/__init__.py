"""Stage: the value network and its self-play positions (`engine-train value`, `value-data`)."""
