"""Pattern features of AlphaGo's fast rollout policy (Nature 2016, Extended Data Table 4).

Every candidate move p of the side to move c gets these sparse binary features:

| family | key (`make_key`)           | active when                                             |
|--------|----------------------------|---------------------------------------------------------|
| 0      | SCALAR_RESPONSE            | the response (diamond) pattern is in the dictionary     |
| 0      | SCALAR_SAVE_ATARI          | p saves an own string next to the last move from atari: |
|        |                            | extends it to >= 2 liberties, or captures               |
| 0      | SCALAR_NEIGHBOUR + i       | p is 8-connected to the last move, i = its slot 0..7    |
| 0      | SCALAR_UNKNOWN_3X3         | the 3x3 pattern of p is NOT in the dictionary           |
| 1      | canonical 3x3 code         | always (non-response pattern around p)                  |
| 2      | canonical diamond + slot   | p is one of the 12 diamond points around the last move  |
|        |                            | (response pattern)                                      |
| 3      | canonical shape + cell     | the last move captured 3..6 stones and p is one of      |
|        |                            | their points (nakade)                                   |

A point of a pattern has one of 8 states (`S_*`): empty, off board, or a stone of either colour
whose string has 1, 2 or >= 3 liberties. States are always given from the view of the side to move
("own" = c), so a colour-swapped position with the other side to move has the same keys. A code is
canonical when it is the smallest over the 8 symmetries of the square (`SYM`), so rotated and
reflected positions share keys too.

Codes (3 bits per point, point i at bits 3i):

* 3x3: the 8 neighbours of p in `NB_DR/NB_DC` order (24 bits).
* diamond: the last move (slot 0) and the 12 points of Manhattan distance 1..2 around it in
  `DM_DR/DM_DC` order (39 bits), plus p's slot (1..12) at bit 39.
* nakade: the captured points as a bitmask over a 6x6 box (36 bits, row-major after the shape is
  moved to the box's corner), plus p's cell (0..35) at bit 36.

The same kernels compute the features in training (`position_keys`, from scratch) and in the
playout (`engine.rollout.policy`, incrementally); tests check that both agree.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine.board import (BLACK, BORDER, EMPTY, F_COLOR, F_HEAD, F_LIBS, F_NEXT, KO,
                          LEGAL, M_LAST, M_N, M_W, WHITE, find_liberty, is_eye, legality,
                          play)
from goengine.engine.playout import libs_after

# ---- point states ------------------------------------------------------------------------------
S_EMPTY, S_BORDER = 0, 1
S_B1, S_B2, S_B3 = 2, 3, 4      # black string with 1, 2, >= 3 liberties
S_W1, S_W2, S_W3 = 5, 6, 7      # white string with 1, 2, >= 3 liberties
SWAP = np.array([0, 1, 5, 6, 7, 2, 3, 4], dtype=np.int64)   # colour swap of a state

# ---- key families --------------------------------------------------------------------------------
FAM_SCALAR, FAM_3X3, FAM_DIAMOND, FAM_NAKADE = 0, 1, 2, 3
FAMILY_SHIFT = 56
CODE_MASK = (1 << FAMILY_SHIFT) - 1
FAMILY_NAMES = ("scalar", "3x3", "diamond", "nakade")
SCALAR_RESPONSE = 0
SCALAR_SAVE_ATARI = 1
SCALAR_NEIGHBOUR = 2            # .. 9
SCALAR_UNKNOWN_3X3 = 10
N_SCALARS = 11
SCALAR_NAMES = (["response", "save_atari"] + [f"neighbour_{i}" for i in range(8)]
                + ["unknown_3x3"])

# Columns of the raw key matrix `position_keys` fills (-1 = feature absent).
K_3X3, K_DIAMOND, K_SAVE, K_NEIGHBOUR, K_NAKADE = range(5)
NK = 5

NAKADE_MIN, NAKADE_MAX = 3, 6
NAKADE_BOX = 6

# ---- geometry ----------------------------------------------------------------------------------
NB_DR = np.array([-1, -1, -1, 0, 0, 1, 1, 1], dtype=np.int64)
NB_DC = np.array([-1, 0, 1, -1, 1, -1, 0, 1], dtype=np.int64)
DM_DR = np.array([0, -1, 1, 0, 0, -1, -1, 1, 1, -2, 2, 0, 0], dtype=np.int64)
DM_DC = np.array([0, 0, 0, -1, 1, -1, 1, -1, 1, 0, 0, -2, 2], dtype=np.int64)
N_DIAMOND = 13


def _sym_matrices() -> np.ndarray:
    """SYM[k] = 2x2 integer matrix acting on (dr, dc): k < 4 rotations by k * 90 degrees,
    k >= 4 a transpose followed by k - 4 rotations (the dihedral group of the square)."""
    rot = np.array([[0, -1], [1, 0]])
    out = np.zeros((8, 2, 2), dtype=np.int64)
    for k in range(8):
        m = np.eye(2, dtype=np.int64) if k < 4 else np.array([[0, 1], [1, 0]])
        for _ in range(k % 4):
            m = rot @ m
        out[k] = m
    return out


SYM = _sym_matrices()


def _perm(dr: np.ndarray, dc: np.ndarray) -> np.ndarray:
    """PERM[k, i] = slot that slot i moves to under symmetry k."""
    pts = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(dr, dc))}
    out = np.zeros((8, len(dr)), dtype=np.int64)
    for k in range(8):
        for i, (a, b) in enumerate(zip(dr, dc)):
            v = SYM[k] @ np.array([a, b])
            out[k, i] = pts[(int(v[0]), int(v[1]))]
    return out


P3 = _perm(NB_DR, NB_DC)
PD = _perm(DM_DR, DM_DC)

# slot lookup tables: NB_SLOT[(dr + 1) * 3 + dc + 1], DM_SLOT[(dr + 2) * 5 + dc + 2]; -1 = none
NB_SLOT = np.full(9, -1, dtype=np.int64)
for _i in range(8):
    NB_SLOT[(NB_DR[_i] + 1) * 3 + NB_DC[_i] + 1] = _i
DM_SLOT = np.full(25, -1, dtype=np.int64)
for _i in range(N_DIAMOND):
    DM_SLOT[(DM_DR[_i] + 2) * 5 + DM_DC[_i] + 2] = _i
# DM_NB[slot] = neighbour slot (0..7) of diamond slot 1..8, -1 for the others
DM_NB = np.full(N_DIAMOND, -1, dtype=np.int64)
for _i in range(1, 9):
    DM_NB[_i] = NB_SLOT[(DM_DR[_i] + 1) * 3 + DM_DC[_i] + 1]
del _i


@njit(cache=True, inline="always")
def make_key(family, code):
    return (np.int64(family) << FAMILY_SHIFT) | np.int64(code)


def key_family(keys: np.ndarray) -> np.ndarray:
    return np.asarray(keys, dtype=np.int64) >> FAMILY_SHIFT


# ---- states and raw codes ------------------------------------------------------------------------
@njit(cache=True, inline="always")
def point_state(st, p):
    """The pattern state of cell p (colour-absolute: black is 2..4, white 5..7)."""
    col = st[F_COLOR, p]
    if col == EMPTY:
        return 0
    if col == BORDER:
        return 1
    libs = st[F_LIBS, st[F_HEAD, p]]
    if libs > 3:
        libs = 3
    return (1 if col == BLACK else 4) + libs


@njit(cache=True)
def code3(st, meta, p):
    """Colour-absolute 3x3 code of the 8 neighbours of p, read from the board."""
    w = meta[M_W]
    code = 0
    for i in range(8):
        code |= point_state(st, p + NB_DR[i] * w + NB_DC[i]) << (3 * i)
    return code


@njit(cache=True, inline="always")
def code3_s3(s3, p, w):
    """Colour-absolute 3x3 code of the 8 neighbours of p from a kept state array."""
    return (np.int64(s3[p - w - 1]) | (np.int64(s3[p - w]) << 3) | (np.int64(s3[p - w + 1]) << 6)
            | (np.int64(s3[p - 1]) << 9) | (np.int64(s3[p + 1]) << 12)
            | (np.int64(s3[p + w - 1]) << 15) | (np.int64(s3[p + w]) << 18)
            | (np.int64(s3[p + w + 1]) << 21))


@njit(cache=True, inline="always")
def swap_code(code, npoints):
    """Colour swap of a code of `npoints` states."""
    out = 0
    for i in range(npoints):
        out |= SWAP[(code >> (3 * i)) & 7] << (3 * i)
    return out


@njit(cache=True)
def canon3(code):
    """Smallest code over the 8 symmetries of a 3x3 code (already in the player's view)."""
    best = code
    for k in range(1, 8):
        t = 0
        for i in range(8):
            t |= ((code >> (3 * i)) & 7) << (3 * P3[k, i])
        if t < best:
            best = t
    return best


@njit(cache=True)
def key3(code, c):
    """Dictionary key of a colour-absolute 3x3 code for the side to move c."""
    if c == WHITE:
        code = swap_code(code, 8)
    return make_key(FAM_3X3, canon3(code))


@njit(cache=True)
def diamond_raw(st, meta, last, c):
    """Raw code (39 bits, c's view, no symmetry) of the diamond around the last move."""
    w = meta[M_W]
    r0 = last // w
    c0 = last % w
    raw = 0
    for i in range(N_DIAMOND):
        r = r0 + DM_DR[i]
        cc = c0 + DM_DC[i]
        if r < 0 or r >= w or cc < 0 or cc >= w:
            s = S_BORDER
        else:
            s = point_state(st, r * w + cc)
        if c == WHITE:
            s = SWAP[s]
        raw |= np.int64(s) << (3 * i)
    return raw


@njit(cache=True)
def diamond_perms(raw, out):
    """out[k] = the raw diamond code moved by symmetry k."""
    for k in range(8):
        t = 0
        for i in range(N_DIAMOND):
            t |= ((raw >> (3 * i)) & 7) << (3 * PD[k, i])
        out[k] = t


@njit(cache=True)
def diamond_codes(st, meta, last, c, out):
    """The diamond pattern around the last move in c's view, under each of the 8 symmetries:
    out[k] = code of the pattern moved by symmetry k (39 bits)."""
    diamond_perms(diamond_raw(st, meta, last, c), out)


@njit(cache=True, inline="always")
def diamond_key(codes, slot):
    """Dictionary key of the response pattern for the candidate in diamond slot 1..12."""
    best = -1
    for k in range(8):
        t = codes[k] | (PD[k, slot] << 39)
        if best < 0 or t < best:
            best = t
    return make_key(FAM_DIAMOND, best)


@njit(cache=True, inline="always")
def diamond_slot(last, p, w):
    """Slot (1..12) of p in the diamond around `last`, or -1."""
    dr = p // w - last // w
    dc = p % w - last % w
    if dr < -2 or dr > 2 or dc < -2 or dc > 2:
        return -1
    s = DM_SLOT[(dr + 2) * 5 + dc + 2]
    return s if s > 0 else -1


@njit(cache=True, inline="always")
def neighbour_slot(last, p, w):
    """Slot (0..7) of p among the 8 neighbours of `last`, or -1."""
    dr = p // w - last // w
    dc = p % w - last % w
    if dr < -1 or dr > 1 or dc < -1 or dc > 1:
        return -1
    return NB_SLOT[(dr + 1) * 3 + dc + 1]


@njit(cache=True)
def nakade_shapes(caps, ncaps, w, masks, cells):
    """Canonicalisation data of the captured region caps[:ncaps]: for each symmetry k, masks[k] is
    the shape's 6x6 bitmask and cells[k, j] the cell of caps[j]. Returns False when the region is
    not a nakade candidate (size outside 3..6, or it does not fit the box)."""
    if ncaps < NAKADE_MIN or ncaps > NAKADE_MAX:
        return False
    for k in range(8):
        rmin = 1 << 30
        cmin = 1 << 30
        rmax = -(1 << 30)
        cmax = -(1 << 30)
        for j in range(ncaps):
            r = caps[j] // w
            c = caps[j] % w
            rr = SYM[k, 0, 0] * r + SYM[k, 0, 1] * c
            cc = SYM[k, 1, 0] * r + SYM[k, 1, 1] * c
            rmin = min(rmin, rr)
            cmin = min(cmin, cc)
            rmax = max(rmax, rr)
            cmax = max(cmax, cc)
        if rmax - rmin >= NAKADE_BOX or cmax - cmin >= NAKADE_BOX:
            return False
        m = 0
        for j in range(ncaps):
            r = caps[j] // w
            c = caps[j] % w
            rr = SYM[k, 0, 0] * r + SYM[k, 0, 1] * c - rmin
            cc = SYM[k, 1, 0] * r + SYM[k, 1, 1] * c - cmin
            cell = rr * NAKADE_BOX + cc
            cells[k, j] = cell
            m |= np.int64(1) << cell
        masks[k] = m
    return True


@njit(cache=True, inline="always")
def nakade_key(masks, cells, j):
    best = -1
    for k in range(8):
        t = masks[k] | (cells[k, j] << 36)
        if best < 0 or t < best:
            best = t
    return make_key(FAM_NAKADE, best)


# ---- tactics -------------------------------------------------------------------------------------
@njit(cache=True)
def legal_noko(st, meta, p, c):
    """Legality of c at empty p ignoring ko (occupied and suicide only)."""
    code = legality(st, meta, p, c)
    return code == LEGAL or code == KO


@njit(cache=True)
def save_atari_points(st, meta, c, last, out):
    """Moves of c that save an own string orthogonally next to the last move from atari: capture
    an adjacent opponent string in atari, or extend to >= 2 liberties. Writes distinct Locs (legal
    ignoring ko) into out; returns how many."""
    k = 0
    if last < 0:
        return 0
    w = meta[M_W]
    opp = 3 - c
    h0 = -1
    h1 = -1
    h2 = -1
    for q in (last - w, last + w, last - 1, last + 1):
        if st[F_COLOR, q] != c:
            continue
        h = st[F_HEAD, q]
        if st[F_LIBS, h] != 1 or h == h0 or h == h1 or h == h2:
            continue
        if h0 == -1:
            h0 = h
        elif h1 == -1:
            h1 = h
        else:
            h2 = h
        s = h
        while True:
            for r in (s - w, s + w, s - 1, s + 1):
                if st[F_COLOR, r] == opp:
                    ho = st[F_HEAD, r]
                    if st[F_LIBS, ho] == 1:
                        lib = find_liberty(st, meta, ho)
                        k = _add_unique(out, k, lib)
            s = st[F_NEXT, s]
            if s == h:
                break
        lib = find_liberty(st, meta, h)
        if legal_noko(st, meta, lib, c) and libs_after(st, meta, lib, c) >= 2:
            k = _add_unique(out, k, lib)
    return k


@njit(cache=True, inline="always")
def _add_unique(out, k, p):
    for i in range(k):
        if out[i] == p:
            return k
    if k < out.shape[0]:
        out[k] = p
        return k + 1
    return k


@njit(cache=True)
def play_record(st, meta, p, c, caps):
    """engine.board.play, also writing the captured stones into caps; returns how many."""
    w = meta[M_W]
    opp = 3 - c
    n = 0
    h0 = -1
    h1 = -1
    h2 = -1
    for q in (p - w, p + w, p - 1, p + 1):
        if st[F_COLOR, q] == opp:
            h = st[F_HEAD, q]
            if st[F_LIBS, h] == 1 and h != h0 and h != h1 and h != h2:
                if h0 == -1:
                    h0 = h
                elif h1 == -1:
                    h1 = h
                else:
                    h2 = h
                s = h
                while True:
                    caps[n] = s
                    n += 1
                    s = st[F_NEXT, s]
                    if s == h:
                        break
    play(st, meta, p, c)
    return n


# ---- all features of a position, from scratch ------------------------------------------------
@njit(cache=True)
def is_candidate(st, meta, p, c):
    """A move the rollout policy may play: legal (simple ko included) and not filling an own
    true eye."""
    return legality(st, meta, p, c) == LEGAL and not is_eye(st, meta, p, c)


@njit(cache=True)
def position_keys(st, meta, c, caps, ncaps, cand, keys):
    """Every candidate move of c (see `is_candidate`) with its raw feature keys.

    `caps[:ncaps]` are the stones the last move (meta[M_LAST]) captured. Writes the candidate
    Locs into cand[:k] and their keys into keys[:k, :NK] (columns K_*, -1 = absent); returns k.
    """
    n = meta[M_N]
    w = meta[M_W]
    last = meta[M_LAST]
    dcodes = np.empty(8, dtype=np.int64)
    sa = np.empty(16, dtype=np.int64)
    nsa = 0
    if last >= 0:
        diamond_codes(st, meta, last, c, dcodes)
        nsa = save_atari_points(st, meta, c, last, sa)
    masks = np.empty(8, dtype=np.int64)
    cells = np.empty((8, NAKADE_MAX), dtype=np.int64)
    nak = last >= 0 and nakade_shapes(caps, ncaps, w, masks, cells)
    k = 0
    for r in range(n):
        for cc in range(n):
            p = (r + 1) * w + cc + 1
            if st[F_COLOR, p] != EMPTY or not is_candidate(st, meta, p, c):
                continue
            cand[k] = p
            keys[k, K_3X3] = key3(code3(st, meta, p), c)
            keys[k, K_DIAMOND] = -1
            keys[k, K_SAVE] = -1
            keys[k, K_NEIGHBOUR] = -1
            keys[k, K_NAKADE] = -1
            if last >= 0:
                slot = diamond_slot(last, p, w)
                if slot > 0:
                    keys[k, K_DIAMOND] = diamond_key(dcodes, slot)
                nb = neighbour_slot(last, p, w)
                if nb >= 0:
                    keys[k, K_NEIGHBOUR] = make_key(FAM_SCALAR, SCALAR_NEIGHBOUR + nb)
                for i in range(nsa):
                    if sa[i] == p:
                        keys[k, K_SAVE] = make_key(FAM_SCALAR, SCALAR_SAVE_ATARI)
                if nak:
                    for j in range(ncaps):
                        if caps[j] == p:
                            keys[k, K_NAKADE] = nakade_key(masks, cells, j)
            k += 1
    return k


# ---- open-addressing hash tables -----------------------------------------------------------------
# A table is one int64 array `kv` of 2 * 2^b entries: slot i holds its key at kv[2i] (-1 = empty)
# and its value at 2i + 1, read through `vals`, a view of the same buffer (int64 for counts and
# indices, float64 for weights), so that a lookup touches one cache line.
_HMUL = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _hslot(key, mask):
    h = (np.uint64(key) * _HMUL) >> np.uint64(29)
    return np.int64(h) & mask


@njit(cache=True)
def table_find(kv, key):
    """Index of key's value (into the value view of kv), or -1 when key is absent."""
    mask = (kv.shape[0] >> 1) - 1
    i = _hslot(key, mask)
    while True:
        k = kv[2 * i]
        if k == key:
            return 2 * i + 1
        if k == -1:
            return -1
        i = (i + 1) & mask


@njit(cache=True)
def table_slot(kv, key):
    """Index of key's value, claiming an empty slot if key is new; -1 when the table is full."""
    size = kv.shape[0] >> 1
    mask = size - 1
    i = _hslot(key, mask)
    for _ in range(size):
        k = kv[2 * i]
        if k == key:
            return 2 * i + 1
        if k == -1:
            kv[2 * i] = key
            return 2 * i + 1
        i = (i + 1) & mask
    return -1


def table_bits(count: int, load: float = 0.5) -> int:
    bits = 4
    while (1 << bits) * load < count:
        bits += 1
    return bits


def new_table(bits: int, dtype=np.int64):
    """An empty table of 2^bits slots: (kv, vals) with vals the `dtype` view of kv. 32-bit
    dtypes (float32 / int32 values) give a compact table whose keys must fit in 31 bits."""
    kdtype = np.int32 if np.dtype(dtype).itemsize == 4 else np.int64
    kv = np.zeros(2 << bits, dtype=kdtype)
    kv[0::2] = -1
    return kv, kv.view(dtype)


def build_table(keys: np.ndarray, values: np.ndarray, load: float = 0.5):
    """(kv, vals): a table mapping keys[i] -> values[i]; the value dtype (int64, float64 or
    float32) is that of `values`."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    values = np.asarray(values)
    if np.issubdtype(values.dtype, np.floating):
        dtype = np.float32 if values.dtype == np.float32 else np.float64
    else:
        dtype = np.int64
    kv, vals = new_table(table_bits(len(keys), load), dtype)
    if kv.dtype == np.int32 and len(keys) and (keys.min() < 0 or keys.max() >= 2**31):
        raise ValueError("keys do not fit a 32-bit table")
    _fill_table(kv, vals, keys, values.astype(dtype))
    return kv, vals


@njit(cache=True)
def _fill_table(kv, vals, keys, values):
    for i in range(keys.shape[0]):
        vals[table_slot(kv, keys[i])] = values[i]


def table_items(kv, vals):
    """(keys, values) stored in a table."""
    used = kv[0::2] != -1
    return kv[0::2][used].copy(), vals[1::2][used].copy()
