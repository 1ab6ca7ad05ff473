"""Games of a head-to-head benchmark on the self-play workers, with a progress bar that shows the
first network's running score: a 19x19 match at fixed visits runs for an hour or more, and its
result should be readable while it plays, not only at the end."""
from __future__ import annotations

from tqdm import tqdm


def play_games(pool, jobs: list, games: int, first: str = "a") -> list:
    """Every GameResult of `jobs` (run on `pool`, a training.workers.pool.WorkerPool), in the order
    the jobs finish; the bar counts games and the score of `first` (a draw counts half)."""
    results = []
    points = 0.0
    with tqdm(total=games, unit="game", dynamic_ncols=True) as bar:
        for _, finished in pool.run(jobs):
            for r in finished:
                z = r.z_for(first)
                points += 1.0 if z > 0 else 0.5 if z == 0 else 0.0
            results.extend(finished)
            bar.update(len(finished))
            bar.set_postfix(score=f"{points:g}/{len(results)}")
    return results
