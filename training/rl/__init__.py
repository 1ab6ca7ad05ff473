"""Stage: the RL policy by REINFORCE self-play, and policy self-play games
(`engine-train rl`, `selfplay`)."""
