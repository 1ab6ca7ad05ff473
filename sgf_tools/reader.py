"""SGF bytes -> `GameRecord` (main line only), tolerant of what real files contain.

Parsing is sgfmill's (`sgfmill.sgf_grammar`); interpretation is ours.  Plain files (a root
node followed only by ``;B[..]`` / ``;W[..]`` nodes, like every Tygem record) take a fast
path, a pair of regular expressions that accept a subset of sgfmill's grammar with the same
tokenisation; everything else goes through sgfmill.  Both feed the same interpretation code,
and tests check that the two paths give identical records.

What is accepted:

* empty / unknown ``KM[]``, ``KM[6.50]``, Fox's ``KM[750]`` (komi x 100, ``375`` = 3.75 stones
  = 7.5 points), ``KM[7,5]``;
* ``HA[n]`` without setup stones followed by n consecutive B moves (KGS free placement):
  those moves become ``setup_black``;
* ``AB`` / ``AW`` / ``AE`` (also compressed ``aa:cc`` lists) in any node before the first move;
* passes ``B[]`` and, on boards up to 19x19, ``B[tt]``;
* any charset: ``CA`` is honoured when Python knows it, otherwise / on failure UTF-8, then
  the declared charset with replacement (for a declared UTF-8: broken bytes replaced), or
  latin-1; decoding never fails;
* variations (the first one is followed), lower-case letters inside property names
  (``AddBlack``), junk before ``(;`` and after the game, missing ``SZ`` (19), ``SZ[19:19]``.

Broken games raise `SgfError` whose ``reason`` is one of `REASONS`.  Move legality is not
checked here (there is no rules engine in this package): the caller replays.
"""

from __future__ import annotations

import codecs
import re
from sgfmill import sgf_grammar

from .record import GameRecord

__all__ = ["SgfError", "REASONS", "read_sgf", "read_sgf_file", "read_sgf_collection",
           "parse_komi", "MAX_SIZE"]

MAX_SIZE = 25            # largest board accepted (GTP's limit)

REASONS = (
    "empty",              # nothing but whitespace
    "not sgf",            # no '(;' anywhere
    "parse error",        # SGF grammar error: truncated file, unbalanced brackets, ...
    "not go",             # GM[] is not 1
    "bad size",           # SZ not a number, not square, or outside 2..MAX_SIZE
    "bad move",           # malformed B/W value, several values, or B and W in one node
    "move off board",     # well-formed point outside the board
    "bad setup",          # malformed or off-board AB/AW/AE point
    "setup in mid-game",  # AB/AW/AE after the first move
    "no moves",           # no move left (after free-placement handicap stones are set up)
)


class SgfError(ValueError):
    """A game that cannot be read.  ``reason`` is a short key (see `REASONS`)."""

    def __init__(self, reason: str, detail: str = "", source: str | None = None):
        self.reason = reason
        self.detail = detail
        self.source = source
        msg = reason
        if detail:
            msg += ": " + detail
        if source:
            msg += " (%s)" % source
        super().__init__(msg)


# --------------------------------------------------------------------------- points

_TABLES: dict[int, dict[bytes, tuple[int, int] | None]] = {}


def _point_table(size: int) -> dict[bytes, tuple[int, int] | None]:
    """raw SGF point -> (row, col) (row 0 = top) or None for a pass."""
    t = _TABLES.get(size)
    if t is None:
        t = {}
        for r in range(size):
            for c in range(size):
                t[bytes((97 + c, 97 + r))] = (r, c)
        t[b""] = None
        if size <= 19:
            t[b"tt"] = None
        _TABLES[size] = t
    return t


_MOVE_TABLES: dict[int, dict[bytes, tuple]] = {}
_WS = re.compile(rb"\s+")


def _move_table(size: int) -> dict[bytes, tuple]:
    """b'B[pd' -> ('b', (row, col)), b'W[' -> ('w', None), for the fast path."""
    t = _MOVE_TABLES.get(size)
    if t is None:
        t = {}
        for raw, p in _point_table(size).items():
            t[b"B[" + raw] = ("b", p)
            t[b"W[" + raw] = ("w", p)
        _MOVE_TABLES[size] = t
    return t


_WELL_FORMED_POINT = re.compile(rb"\A[a-zA-Z]{2}\Z")


def _move_point(raw: bytes, table) -> tuple[int, int] | None:
    try:
        return table[raw]
    except KeyError:
        pass
    v = raw.strip()
    if v in table:                      # B[ pd ] / B[pd\n]
        return table[v]
    if _WELL_FORMED_POINT.match(v):
        raise SgfError("move off board", repr(raw.decode("latin-1")))
    raise SgfError("bad move", repr(raw.decode("latin-1")))


def _setup_points(values: list[bytes], table) -> list[tuple[int, int]]:
    """Expand a point list (possibly compressed ``aa:cc``); file order, duplicates kept."""
    out = []
    for raw in values:
        raw = raw.strip()
        a, colon, b = raw.partition(b":")
        p1 = table.get(a)
        if p1 is None:
            raise SgfError("bad setup", repr(raw.decode("latin-1")))
        if not colon:
            out.append(p1)
            continue
        p2 = table.get(b.strip())
        if p2 is None:
            raise SgfError("bad setup", repr(raw.decode("latin-1")))
        (r1, c1), (r2, c2) = p1, p2
        for r in range(min(r1, r2), max(r1, r2) + 1):
            for c in range(min(c1, c2), max(c1, c2) + 1):
                out.append((r, c))
    return out


# --------------------------------------------------------------------------- text

def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except (LookupError, ValueError, TypeError):
        return None


def _decode(bb: bytes, encoding: str | None, declared_utf8: bool) -> str:
    if encoding is not None:
        try:
            return bb.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            pass
    try:
        return bb.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if encoding is not None and not declared_utf8:
        return bb.decode(encoding, "replace")
    if declared_utf8:
        return bb.decode("utf-8", "replace")
    return bb.decode("latin-1")


class _Ctx:
    __slots__ = ("encoding", "utf8")

    def __init__(self, root: dict):
        ca = root.get("CA")
        name = None
        if ca:
            name = ca[0].decode("ascii", "replace").strip()
        self.encoding = _codec(name)
        self.utf8 = self.encoding == "utf-8"

    def simple(self, values: list[bytes] | None) -> str | None:
        """SimpleText property -> stripped str, None when missing or empty."""
        if not values:
            return None
        s = _decode(sgf_grammar.simpletext_value(values[0]), self.encoding, self.utf8).strip()
        return s or None

    def text(self, values: list[bytes] | None) -> str | None:
        if not values:
            return None
        s = "\n".join(_decode(sgf_grammar.text_value(v), self.encoding, self.utf8) for v in values)
        return s if s.strip() else None


# --------------------------------------------------------------------------- numbers

_NUM_RE = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)$")


def parse_komi(text: str | None) -> float | None:
    """KM value -> points, or None when missing, empty or unreadable.

    Fox writes komi x 100 (``750`` -> 7.5, ``650`` -> 6.5); values below 500 in that form
    are in stones, Chinese style (``375`` = 3.75 stones -> 7.5 points).
    """
    if text is None:
        return None
    s = text.strip()
    if not _NUM_RE.match(s):
        return None
    k = float(s.replace(",", "."))
    if k != k or abs(k) > 10000:
        return None
    if abs(k) >= 100 and k == int(k):            # Fox: komi x 100
        k = k / 100.0
        if abs(k) < 5:                           # 3.75 stones etc.
            k = k * 2.0
    return k + 0.0                               # -0.0 -> 0.0


def _parse_int(text: str | None) -> int | None:
    if text is None:
        return None
    s = text.strip()
    try:
        return int(s)
    except ValueError:
        try:
            f = float(s)
        except ValueError:
            return None
        return int(f) if f == int(f) else None


def _parse_size(root: dict, ctx: _Ctx) -> int:
    raw = root.get("SZ")
    if not raw:
        return 19
    s = ctx.simple(raw)
    if s is None:
        return 19
    a, colon, b = s.partition(":")
    n = _parse_int(a)
    if colon and _parse_int(b) != n:
        raise SgfError("bad size", "SZ[%s]" % s)
    if n is None or not (2 <= n <= MAX_SIZE):
        raise SgfError("bad size", "SZ[%s]" % s)
    return n


# --------------------------------------------------------------------------- building

_COLOURS = {b"B": "b", b"W": "w"}


class _Builder:
    def __init__(self, root: dict, want_comments: bool, allow_empty: bool):
        self.ctx = ctx = _Ctx(root)
        self.allow_empty = allow_empty      # a record of a position alone (no moves) is kept
        gm = ctx.simple(root.get("GM"))
        if gm is not None and gm != "1":
            raise SgfError("not go", "GM[%s]" % gm)
        self.size = _parse_size(root, ctx)
        self.table = _point_table(self.size)
        self.black: dict[tuple[int, int], None] = {}   # ordered sets
        self.white: dict[tuple[int, int], None] = {}
        self.moves: list = []
        self.want_comments = want_comments
        self.comments: dict[int, list[str]] = {}

    def node(self, props: dict) -> None:
        if "AB" in props or "AW" in props or "AE" in props:
            if self.moves:
                raise SgfError("setup in mid-game", "at move %d" % len(self.moves))
            t = self.table
            for p in _setup_points(props.get("AE", []), t):
                self.black.pop(p, None)
                self.white.pop(p, None)
            for p in _setup_points(props.get("AB", []), t):
                self.white.pop(p, None)
                self.black[p] = None
            for p in _setup_points(props.get("AW", []), t):
                self.black.pop(p, None)
                self.white[p] = None
        b = props.get("B")
        w = props.get("W")
        if b is not None or w is not None:
            if b is not None and w is not None:
                raise SgfError("bad move", "B and W in one node")
            vals = b if b is not None else w
            if len(vals) != 1:
                raise SgfError("bad move", "%d values" % len(vals))
            self.moves.append(("b" if b is not None else "w", _move_point(vals[0], self.table)))
        if self.want_comments and "C" in props:
            c = self.ctx.text(props["C"])
            if c is not None:
                self.comments.setdefault(len(self.moves) - 1, []).append(c)

    def simple_moves(self, tokens: list[bytes]) -> None:
        """Moves from the fast path: tokens like b'B[pd' (see `_SIMPLE_MOVE`)."""
        t = _move_table(self.size)
        n = len(self.moves)
        try:
            self.moves.extend(map(t.__getitem__, tokens))
            return
        except KeyError:
            del self.moves[n:]
        for tok in tokens:              # whitespace inside a token, or a bad point
            key = _WS.sub(b"", tok)
            m = t.get(key)
            if m is None:
                _move_point(key[2:], self.table)       # raises the right SgfError
                raise SgfError("bad move", repr(tok))  # pragma: no cover
            self.moves.append(m)

    def finish(self, root: dict, source: str | None) -> GameRecord:
        ctx = self.ctx
        ha = _parse_int(ctx.simple(root.get("HA")))
        handicap = ha if ha is not None and ha >= 0 else 0
        moves = self.moves
        setup_black = list(self.black)
        setup_white = list(self.white)
        comments = self.comments
        # KGS free placement: HA[n], no setup, the first n moves are black stones.
        if handicap >= 2 and not setup_black and not setup_white and len(moves) >= handicap:
            head = moves[:handicap]
            pts = [p for c, p in head if c == "b" and p is not None]
            if len(pts) == handicap and len(set(pts)) == handicap:
                setup_black = pts
                moves = moves[handicap:]
                if comments:
                    shifted: dict[int, list[str]] = {}
                    for i, cs in comments.items():
                        j = i - handicap if i >= handicap else -1
                        shifted.setdefault(j, []).extend(cs)
                    comments = shifted
        if not moves and not self.allow_empty:
            raise SgfError("no moves")
        km = root.get("KM")
        rec = GameRecord(
            size=self.size,
            komi=parse_komi(ctx.simple(km)) if km else None,
            handicap=handicap,
            setup_black=setup_black,
            setup_white=setup_white,
            moves=moves,
            result=ctx.simple(root.get("RE")),
            black_player=ctx.simple(root.get("PB")),
            white_player=ctx.simple(root.get("PW")),
            black_rank=ctx.simple(root.get("BR")),
            white_rank=ctx.simple(root.get("WR")),
            rules=ctx.simple(root.get("RU")),
            date=ctx.simple(root.get("DT")),
            source=source,
        )
        if comments:
            rec.comments = {i: "\n".join(cs) for i, cs in sorted(comments.items())}
        return rec


# --------------------------------------------------------------------------- fast path

_FIND_START = re.compile(rb"\(\s*;")
_VALUE = rb"\[(?:[^\\\]]|\\.)*\]"
# root node properties, then only ';B[xx]' / ';W[xx]' nodes, then ')'.  Same tokens as
# sgfmill's tokeniser (whitespace allowed before every token, 1..64 letter identifiers).
_SIMPLE_GAME = re.compile(
    rb"\(\s*;(?P<root>(?:\s*[A-Za-z]{1,64}(?:\s*" + _VALUE + rb")+)*)"
    rb"(?P<moves>(?:\s*;\s*[BW]\s*\[[a-z]{0,2}\])*)\s*\)", re.DOTALL)
_ROOT_PROP = re.compile(rb"\s*([A-Za-z]{1,64})((?:\s*" + _VALUE + rb")+)", re.DOTALL)
_PROP_VALUE = re.compile(rb"\[((?:[^\\\]]|\\.)*)\]", re.DOTALL)
_SIMPLE_MOVE = re.compile(rb";\s*([BW]\s*\[[a-z]{0,2})\]")
_LOWER = bytes(range(97, 123))


def _fast_parse(data: bytes, start: int):
    """(root property map, [b'B[pd', ...], end) or None when not a plain file."""
    m = _SIMPLE_GAME.match(data, start)
    if m is None:
        return None
    root: dict[str, list[bytes]] = {}
    for ident, values in _ROOT_PROP.findall(m.group("root")):
        key = ident.translate(None, _LOWER).decode("ascii")
        vals = _PROP_VALUE.findall(values)
        if key in root:
            root[key] = root[key] + vals
        else:
            root[key] = vals
    return root, _SIMPLE_MOVE.findall(m.group("moves")), m.end()


# sgfmill's parser of one game tree from an offset, what its public parse_sgf_collection loops
# over: the public API parses whole files only. pyproject.toml pins sgfmill below 1.2 for it.
_PARSE_ONE = sgf_grammar._parse_sgf_game


def _sgfmill_parse(data: bytes, start: int):
    """(main line property maps, end offset) via sgfmill; raises SgfError("parse error")."""
    try:
        tree, end = _PARSE_ONE(data, start)
    except ValueError as e:
        raise SgfError("parse error", str(e)) from None
    if tree is None:
        raise SgfError("not sgf")
    return list(sgf_grammar.main_sequence_iter(tree)), end


def _read_one(data: bytes, start: int, source, comments: bool, fast: bool,
              allow_empty: bool = False):
    """Read the game tree starting at `start` ('(;').  Returns (record, end)."""
    parsed = _fast_parse(data, start) if fast else None
    if parsed is not None:
        root, pairs, end = parsed
        b = _Builder(root, comments, allow_empty)
        b.node(root)
        if pairs:
            b.simple_moves(pairs)
        return b.finish(root, source), end
    nodes, end = _sgfmill_parse(data, start)
    root = nodes[0]
    b = _Builder(root, comments, allow_empty)
    for props in nodes:
        b.node(props)
    return b.finish(root, source), end


def _as_bytes(data) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    return bytes(data)


def _locate(data: bytes, pos: int = 0) -> int | None:
    m = _FIND_START.search(data, pos)
    return m.start() if m else None


def read_sgf(data: bytes | str, source: str | None = None, *, comments: bool = False,
             fast: bool = True, allow_empty: bool = False) -> GameRecord:
    """Parse the first game of SGF data into a `GameRecord` (main line only).

    ``source`` is stored in the record (file path, ``archive:member``).  With
    ``comments=True`` the C[] texts are kept in ``record.comments``.  ``fast=False`` forces
    the sgfmill path (the result is the same).  ``allow_empty=True`` accepts a position with
    no moves (problems, setups for `loadsgf`).  Raises `SgfError`.
    """
    try:
        data = _as_bytes(data)
    except (TypeError, ValueError) as e:
        raise SgfError("not sgf", str(e), source) from None
    if not data.strip():
        raise SgfError("empty", source=source)
    start = _locate(data)
    if start is None:
        raise SgfError("not sgf", source=source)
    try:
        return _read_one(data, start, source, comments, fast, allow_empty)[0]
    except SgfError as e:
        if e.source is None and source is not None:
            raise SgfError(e.reason, e.detail, source) from None
        raise


def read_sgf_collection(data: bytes | str, source: str | None = None, *,
                        comments: bool = False, fast: bool = True
                        ) -> list[GameRecord | SgfError]:
    """Every game tree of SGF data (a collection), each a record or the `SgfError` for it.

    Game i > 0 gets source ``source#i``.  After a game that cannot be parsed at all (grammar
    error) the rest of the data is abandoned, since its end cannot be found.
    """
    try:
        data = _as_bytes(data)
    except (TypeError, ValueError) as e:
        return [SgfError("not sgf", str(e), source)]
    if not data.strip():
        return [SgfError("empty", source=source)]
    out: list[GameRecord | SgfError] = []
    pos = _locate(data)
    if pos is None:
        return [SgfError("not sgf", source=source)]
    while pos is not None:
        src = source if not out else "%s#%d" % (source or "", len(out))
        try:
            rec, end = _read_one(data, pos, src, comments, fast)
        except SgfError as e:
            out.append(SgfError(e.reason, e.detail, src))
            end = None if e.reason in ("parse error", "not sgf") else _end_of_tree(data, pos)
            if end is None:
                break
        else:
            out.append(rec)
        pos = _locate(data, end)
    return out


def _end_of_tree(data: bytes, start: int) -> int | None:
    try:
        return _sgfmill_parse(data, start)[1]
    except SgfError:
        return None


def read_sgf_file(path, *, comments: bool = False, allow_empty: bool = False) -> GameRecord:
    """`read_sgf` of a file's bytes, with the path as source."""
    with open(path, "rb") as f:
        data = f.read()
    return read_sgf(data, str(path), comments=comments, allow_empty=allow_empty)
