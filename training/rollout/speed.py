"""The rollout policy's speed: CPU time per move of whole playouts, for the trained model's
metrics (`benchmarks/bench_rollout.py` measures the bundled one)."""
from __future__ import annotations

import time

from goengine.engine.board import new_board
from goengine.engine.playout import seed as np_seed
from goengine.engine.rollout.policy import RolloutPolicy, policy_playouts


def playout_speed(policy: RolloutPolicy, size: int = 19, seconds: float = 3.0,
                  seed: int = 1) -> dict:
    """Microseconds per move and playouts per second of policy playouts from the empty board
    (one thread; the first call compiles)."""
    st, meta = new_board(size)
    max_moves = 3 * size * size
    np_seed(seed)
    policy_playouts(st, meta, 2, max_moves, policy.tables)
    playouts = moves = 0
    start = time.process_time()  # single-threaded kernel: CPU time, steadier on a shared machine
    while time.process_time() - start < seconds:
        _score, m = policy_playouts(st, meta, 20, max_moves, policy.tables)
        playouts += 20
        moves += m
    dt = time.process_time() - start
    return {"us_per_move": dt / max(moves, 1) * 1e6, "playouts_per_s": playouts / dt,
            "moves_per_playout": moves / max(playouts, 1), "size": size}
