"""The rules a game is played under: one frozen record, passed down, never read from globals."""
from __future__ import annotations

from dataclasses import dataclass

SUPERKO_KINDS = ("positional", "situational", "none")
SCORING_KINDS = ("area", "territory")


@dataclass(frozen=True)
class Rules:
    komi: float = 7.5            # points given to white
    superko: str = "positional"  # positional (Chinese/Tromp-Taylor), situational, or none (simple ko only)
    suicide: bool = False        # multi-stone suicide as in Tromp-Taylor / New Zealand when True
    scoring: str = "area"        # area (Chinese, Tromp-Taylor) or territory (Japanese count)

    def __post_init__(self):
        if self.superko not in SUPERKO_KINDS:
            raise ValueError(f"superko must be one of {SUPERKO_KINDS}")
        if self.scoring not in SCORING_KINDS:
            raise ValueError(f"scoring must be one of {SCORING_KINDS}")

    def with_komi(self, komi: float) -> "Rules":
        return Rules(komi=komi, superko=self.superko, suicide=self.suicide, scoring=self.scoring)


# Named rule sets as KGS's kgs-rules and SGF RU[] name them.
NAMED_RULES = {
    "chinese": dict(superko="positional", suicide=False, scoring="area"),
    "tromp-taylor": dict(superko="positional", suicide=True, scoring="area"),
    "aga": dict(superko="situational", suicide=False, scoring="area"),
    "new_zealand": dict(superko="situational", suicide=True, scoring="area"),
    "japanese": dict(superko="none", suicide=False, scoring="territory"),
    "korean": dict(superko="none", suicide=False, scoring="territory"),
}


def named_rules(name: str, komi: float) -> Rules:
    key = name.strip().lower().replace(" ", "_").replace("-", "_")
    key = {"tromp_taylor": "tromp-taylor", "newzealand": "new_zealand", "nz": "new_zealand"}.get(key, key)
    if key not in NAMED_RULES:
        raise ValueError(f"unknown rules {name!r}")
    return Rules(komi=komi, **NAMED_RULES[key])
