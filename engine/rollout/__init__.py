"""AlphaGo's fast rollout policy: pattern features (`patterns`), the linear softmax model and its
incremental numba playout (`policy`)."""
from goengine.engine.rollout.policy import (RolloutModelError, RolloutPolicy,
                                   checked_playout, policy_playout, policy_playouts)

__all__ = ["RolloutModelError", "RolloutPolicy", "checked_playout",
           "policy_playout", "policy_playouts"]
