"""Stage: the SL policy (and the human-data Zero net) from SGF collections (`engine-train sl`)."""
