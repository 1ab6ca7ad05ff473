"""The declared feature sets: named, versioned tuples of plane groups, offsets derived, never typed.

A `FeatureSet` is `(name, version, planes)` where `planes` is a tuple of `(group, width)` pairs in
tensor order. Offsets and the plane count come from that tuple alone, so adding or widening a group
can never make one group spill into the next (the dlgo `offset("turns_since") + ages` bug).

Plane groups (row 0 of every plane is the top of the board; "player" is the colour to move):

| group                | width | value at a point                                                  |
|----------------------|-------|-------------------------------------------------------------------|
| stone_colour         | 3     | player stone / opponent stone / empty                             |
| ones                 | 1     | 1                                                                  |
| turns_since          | 8     | stone played k = 1..7 moves ago -> plane k-1; k >= 8 or a setup   |
|                      |       | (handicap) stone -> plane 7; empty points all zero                |
| liberties            | 8     | stone whose string has l liberties -> plane min(l, 8) - 1          |
| capture_size         | 8     | legal move capturing s opponent stones -> plane min(s, 7)          |
| self_atari_size      | 8     | legal move after which the player's string through it has exactly  |
|                      |       | 1 liberty (captures counted) and s stones -> plane min(s, 8) - 1   |
| liberties_after_move | 8     | legal move -> plane min(l, 8) - 1, l = liberties of the player's   |
|                      |       | string through it after the move, captures counted                 |
| ladder_capture       | 1     | legal move that ataris an opponent string (2 liberties -> 1) that  |
|                      |       | the ladder then captures, whatever the runner does                 |
| ladder_escape        | 1     | legal move after which a player string that is in atari now (next  |
|                      |       | to the move, or next to a string it captures) has 3+ liberties, or |
|                      |       | 2 from which the opponent's ladder fails                           |
| sensibleness         | 1     | legal and not one of the player's own true eyes                    |
| zeros                | 1     | 0                                                                  |
| player_colour        | 1     | 1 everywhere if the player is black                                |
| own_history          | 8     | player stones in the current position and the 7 before (newest     |
|                      |       | first); positions before the start of the game are all zero        |
| opponent_history     | 8     | the same for the opponent's stones                                 |
| black_to_move        | 1     | 1 everywhere if the player is black (Zero's colour plane)          |

"Legal" in the features means: empty, not the simple-ko point, not suicide. Superko is ignored
(it needs the game's history of hashes, and a net must not see it); the Rules' suicide flag is
ignored as well, a suicide is never a candidate. The exact definitions (eye rule, ladder reading)
are in `engine.features.alphago` and `engine.features.ladder`; any change to what a plane means
must bump the set's version, which travels in the model file as `feature_version`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Plane groups computed by the numba kernel of engine.features.alphago, in kernel id order.
KERNEL_GROUPS = ("stone_colour", "ones", "turns_since", "liberties", "capture_size",
                 "self_atari_size", "liberties_after_move", "ladder_capture", "ladder_escape",
                 "sensibleness", "zeros", "player_colour")
# Plane groups built from Game.board_history by engine.features.zero.
HISTORY_GROUPS = ("own_history", "opponent_history", "black_to_move")

GROUP_WIDTHS = {
    "stone_colour": 3, "ones": 1, "turns_since": 8, "liberties": 8, "capture_size": 8,
    "self_atari_size": 8, "liberties_after_move": 8, "ladder_capture": 1, "ladder_escape": 1,
    "sensibleness": 1, "zeros": 1, "player_colour": 1,
    "own_history": 8, "opponent_history": 8, "black_to_move": 1,
}


@dataclass(frozen=True)
class FeatureSet:
    """A named, versioned list of plane groups; `offsets[group]` is where the group starts."""

    name: str
    version: int
    planes: tuple[tuple[str, int], ...]
    offsets: dict[str, int] = field(init=False, repr=False, compare=False)
    num_planes: int = field(init=False)

    def __post_init__(self):
        offsets: dict[str, int] = {}
        k = 0
        for group, width in self.planes:
            if group not in GROUP_WIDTHS:
                raise ValueError(f"unknown plane group {group!r}")
            if width != GROUP_WIDTHS[group]:
                raise ValueError(f"plane group {group!r} has width {GROUP_WIDTHS[group]}, not {width}")
            if group in offsets:
                raise ValueError(f"plane group {group!r} appears twice")
            offsets[group] = k
            k += width
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "num_planes", k)

    def slice(self, group: str) -> slice:
        """The planes of `group`: `planes[fs.slice("liberties")]`."""
        start = self.offsets[group]
        return slice(start, start + GROUP_WIDTHS[group])

    def plane_names(self) -> list[str]:
        """One label per plane, e.g. 'liberties[2]' (for logs, model metadata and debugging)."""
        return [f"{g}[{i}]" if w > 1 else g for g, w in self.planes for i in range(w)]


def _groups(*names: str) -> tuple[tuple[str, int], ...]:
    return tuple((n, GROUP_WIDTHS[n]) for n in names)


_ALPHAGO48 = _groups("stone_colour", "ones", "turns_since", "liberties", "capture_size",
                     "self_atari_size", "liberties_after_move", "ladder_capture", "ladder_escape",
                     "sensibleness", "zeros")

FEATURE_SETS: dict[str, FeatureSet] = {
    fs.name: fs for fs in (
        # AlphaGo (Silver et al. 2016), Extended Data Table 2: the policy network's 48 planes.
        FeatureSet("alphago48", 1, _ALPHAGO48),
        # The value network adds the player-colour plane.
        FeatureSet("alphago49", 1, _ALPHAGO48 + _groups("player_colour")),
        # AlphaGo Zero (Silver et al. 2017): 8 + 8 history planes and the colour plane.
        FeatureSet("zero17", 1, _groups("own_history", "opponent_history", "black_to_move")),
    )
}

FEATURE_VERSIONS: dict[str, int] = {name: fs.version for name, fs in FEATURE_SETS.items()}


def get(name: str | FeatureSet) -> FeatureSet:
    """The feature set called `name` (a FeatureSet is passed through)."""
    if isinstance(name, FeatureSet):
        return name
    try:
        return FEATURE_SETS[name]
    except KeyError:
        raise ValueError(f"unknown feature set {name!r}; known: {sorted(FEATURE_SETS)}") from None
