"""Stage: the AlphaGo Zero loop: self-play, training, gating, registry, reference matches, and
its tools (`engine-train zero`, `zero-reference`, `zero-snapshot`, `zero-grow`)."""
