"""The contract written into every model file, and its checks.

ONNX `metadata_props` (all values are strings):

| key               | meaning                                                              |
|-------------------|----------------------------------------------------------------------|
| kind              | policy, value, rollout or zero                                       |
| feature_set       | the `engine.features` set the input planes come from, e.g. alphago48 |
| feature_version   | that set's version; the engine refuses a model built for another one |
| planes            | number of input planes C of input `planes` [B, C, N, N]              |
| board_sizes       | comma-separated sizes the model runs on, e.g. "9,13,19" or "19"      |
| value_perspective | always side_to_move                                                  |
| policy_index      | row_major (policy: N*N), row_major+pass (zero: N*N+1), none (value)  |
| training_data     | free text: where the training positions came from                    |
| heldout_top1      | held-out top-1 move accuracy, or "" when not measured                |
| sha256            | sha256 of the trained weights (`training.nets.networks.weights_sha256`)       |
| net_config        | JSON of the network's config dict (`training.nets.networks.build`)            |
| heads             | the auxiliary outputs after the kind's own, comma-separated, e.g.    |
|                   | "ownership,score"; "" or absent for none (files before the heads)    |
| quantization      | how an int8 file was made from the float one (training.export.quantize);    |
|                   | "" or absent for float weights                                       |
| komi              | the komi of the games the value (and score) learned from, e.g. "7";  |
|                   | "" or absent: 7.5, the komi of every file before the key             |

Inputs and outputs are named too: input `planes` float32[B, C, N, N]; outputs `policy_logits`
(policy: [B, N*N]; zero: [B, N*N+1]) and `value` ([B], tanh, side to move), then the auxiliary
heads a value net may have: `ownership` ([B, N*N], tanh, +1 = the side to move owns the point at
the end of the game) and `score` ([B], the final area score for the side to move in points, komi
included).
"""
from __future__ import annotations

from dataclasses import dataclass

from goengine.engine.features import FEATURE_SETS

KINDS = ("policy", "value", "rollout", "zero")
REQUIRED_KEYS = ("kind", "feature_set", "feature_version", "planes", "board_sizes",
                 "value_perspective", "policy_index", "sha256")
OPTIONAL_KEYS = ("training_data", "heldout_top1", "net_config", "heads", "quantization", "komi")
KEYS = REQUIRED_KEYS + OPTIONAL_KEYS

# What the engine computes, straight from the feature registry: bumping a FeatureSet's version in
# engine.features makes every model file exported for the older version fail to load.
EXPECTED = {name: fs.version for name, fs in FEATURE_SETS.items()}      # alphago48/49, zero17: 1
PLANES = {name: fs.num_planes for name, fs in FEATURE_SETS.items()}     # 48, 49, 17

# The feature set each kind is trained on by default (Master-style zero nets may use alphago48).
DEFAULT_FEATURE_SET = {"policy": "alphago48", "rollout": "alphago48", "value": "alphago49",
                       "zero": "zero17"}

INPUT_NAME = "planes"
OUTPUT_NAMES = {"policy": ("policy_logits",), "value": ("value",),
                "zero": ("policy_logits", "value")}
AUX_OUTPUTS = ("ownership", "score")      # optional outputs, after the kind's own, in this order
POLICY_INDEX = {"policy": "row_major", "rollout": "row_major", "value": "none",
                "zero": "row_major+pass"}
VALUE_PERSPECTIVE = "side_to_move"

# The kinds of network that can fill each role of a search: a dual-head Zero network gives the
# AlphaGo search its priors (policy head) or its leaf value (value head), one network call for
# both when it fills the two roles (docs/algorithms.md §2.3).
ROLE_KINDS = {"policy": ("policy", "zero"), "value": ("value", "zero"), "zero": ("zero",),
              "rollout": ("rollout",)}


class ModelError(RuntimeError):
    """A model file that cannot be used: missing, unreadable, or built for another contract."""


@dataclass(frozen=True)
class ModelMetadata:
    kind: str
    feature_set: str
    feature_version: int
    planes: int
    board_sizes: tuple[int, ...]
    value_perspective: str
    policy_index: str
    sha256: str
    training_data: str = ""
    heldout_top1: str = ""
    net_config: str = ""
    heads: str = ""
    quantization: str = ""
    komi: str = ""

    @property
    def learned_komi(self) -> float | None:
        """The komi the value learned at, or None where the file does not say (7.5 then)."""
        return float(self.komi) if self.komi else None

    @property
    def aux_outputs(self) -> tuple[str, ...]:
        """The auxiliary outputs the file declares, e.g. ("ownership", "score")."""
        return tuple(h for h in self.heads.split(",") if h)

    @classmethod
    def from_props(cls, props: dict[str, str], where: str = "model") -> ModelMetadata:
        """Parse ONNX metadata_props; ModelError naming `where` if a key is missing or malformed."""
        missing = [k for k in REQUIRED_KEYS if k not in props]
        if missing:
            raise ModelError(f"{where}: metadata lacks {', '.join(missing)}; "
                             f"was it written by training.nets.export.export_onnx?")
        try:
            meta = cls(kind=props["kind"], feature_set=props["feature_set"],
                       feature_version=int(props["feature_version"]),
                       planes=int(props["planes"]),
                       board_sizes=tuple(int(s) for s in props["board_sizes"].split(",") if s),
                       value_perspective=props["value_perspective"],
                       policy_index=props["policy_index"], sha256=props["sha256"],
                       **{k: props.get(k, "") for k in OPTIONAL_KEYS})
            meta.learned_komi          # noqa: B018 (a malformed komi fails here, not in a game)
            return meta
        except ValueError as e:
            raise ModelError(f"{where}: malformed metadata: {e}") from None

    def check(self, where: str = "model", kind: str | tuple[str, ...] | None = None,
              feature_set: str | None = None) -> None:
        """Refuse a model this engine cannot use (ModelError naming what differs and why);
        `kind` is the kind expected, or a tuple of the kinds accepted (ROLE_KINDS)."""
        if self.kind not in KINDS:
            raise ModelError(f"{where}: unknown kind {self.kind!r}; expected one of {KINDS}")
        accepted = (kind,) if isinstance(kind, str) else kind
        if accepted is not None and self.kind not in accepted:
            want = " or ".join(repr(k) for k in accepted)
            raise ModelError(f"{where}: is a {self.kind!r} model, expected {want}")
        if self.feature_set not in EXPECTED:
            raise ModelError(f"{where}: unknown feature set {self.feature_set!r}; "
                             f"this engine knows {sorted(EXPECTED)}")
        if feature_set is not None and self.feature_set != feature_set:
            raise ModelError(f"{where}: uses feature set {self.feature_set!r}, "
                             f"expected {feature_set!r}")
        want = EXPECTED[self.feature_set]
        if self.feature_version != want:
            raise ModelError(f"{where}: built for {self.feature_set} version "
                             f"{self.feature_version}, this engine computes version {want}; "
                             f"re-export or retrain it")
        if self.planes != PLANES[self.feature_set]:
            raise ModelError(f"{where}: says {self.planes} planes, but {self.feature_set} has "
                             f"{PLANES[self.feature_set]}")
        if self.value_perspective != VALUE_PERSPECTIVE:
            raise ModelError(f"{where}: value_perspective {self.value_perspective!r}, "
                             f"expected {VALUE_PERSPECTIVE!r}")
        unknown = set(self.aux_outputs) - set(AUX_OUTPUTS)
        if unknown:
            raise ModelError(f"{where}: unknown heads {sorted(unknown)}; this engine knows "
                             f"{list(AUX_OUTPUTS)}")
        if self.kind in POLICY_INDEX and self.policy_index != POLICY_INDEX[self.kind]:
            raise ModelError(f"{where}: policy_index {self.policy_index!r}, expected "
                             f"{POLICY_INDEX[self.kind]!r} for a {self.kind} model")
