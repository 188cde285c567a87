"""Align two sequences (lines of two texts, words of two lines) at a cost bounded whatever
they hold: the diff view's aligner, in place of difflib's SequenceMatcher, whose cost grows
faster than the product of the lengths on repetitive text (a hundred distinct lines
repeated thousands of times).

    budget = Budget.for_items(len(a) + len(b))
    opcodes(a, b, budget)      # [('equal', 0, 3, 0, 3), ('replace', 3, 4, 3, 6), ...] like difflib

The rules, in order, on each stretch still to align (at first the whole of both):
  * items are compared as small ints (each distinct item numbered once);
  * the common head and tail are equal;
  * items that occur once in each side's stretch anchor it (patience diff): the longest
    chain of such anchors in the same order on both sides (longest increasing subsequence
    by patience sorting) is equal, and each stretch between two anchors is aligned again;
  * a stretch without such anchors gets an exact shortest edit (Myers) if one is found
    within `GAP_STEPS` steps, else an exact longest common subsequence by table when the
    table has at most `GAP_STEPS` cells, else it is left unaligned (a replaced block).
Every step (an item numbered, counted or compared, a table cell, a step of the edit
search, an anchor chained) is taken from the `Budget`; once it is spent, what is left is a
replaced block. The rule running when it runs out may overshoot it by one pass over its
stretch (O(n + m), or O(k log k) to chain k anchors), so with `Budget.for_items` one
alignment costs O((n + m) log(n + m)) steps beyond a fixed allowance, whatever the text.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Sequence

# One stretch without anchors: the most steps its exact alignment may take.
GAP_STEPS = 250_000
# `Budget.for_items`: a fixed allowance and so many steps per item of either side.
FIXED_STEPS = 1_000_000
STEPS_PER_ITEM = 8

_taken = 0          # steps taken by every Budget since import: a deterministic measure of work


def steps_taken() -> int:
    """Steps taken by all alignments so far (read before and after one to measure it)."""
    return _taken


class Budget:
    """Steps one diff may still take; `spend` counts them (also into `steps_taken`)."""
    __slots__ = ("left",)

    def __init__(self, steps: int):
        self.left = steps

    @classmethod
    def for_items(cls, items: int, fixed: int = FIXED_STEPS, per_item: int = STEPS_PER_ITEM) -> Budget:
        return cls(fixed + per_item * items)

    def spend(self, steps: int) -> None:
        global _taken
        self.left -= steps
        _taken += steps


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable], budget: Budget) -> list[tuple[str, int, int, int, int]]:
    """(tag, i1, i2, j1, j2) covering both sequences in order, tags as difflib's: 'equal'
    (a[i1:i2] == b[j1:j2] item by item), 'replace', 'delete', 'insert'."""
    ids: dict = {}
    ha = [ids.setdefault(x, len(ids)) for x in a]
    hb = [ids.setdefault(x, len(ids)) for x in b]
    budget.spend(len(ha) + len(hb))
    match = [-1] * len(ha)                         # match[i] = j where a[i] is aligned with b[j]
    todo = [(0, len(ha), 0, len(hb))]
    while todo:
        todo.extend(reversed(_stretch(ha, hb, *todo.pop(), match, budget)))
    return _to_opcodes(match, len(ha), len(hb))


def _stretch(ha: list[int], hb: list[int], alo: int, ahi: int, blo: int, bhi: int,
             match: list[int], budget: Budget) -> list[tuple[int, int, int, int]]:
    """Align what the rules allow in a[alo:ahi] against b[blo:bhi]; return the stretches
    still to align, in order."""
    start = alo
    while alo < ahi and blo < bhi and ha[alo] == hb[blo]:
        match[alo] = blo
        alo += 1
        blo += 1
    end = ahi
    while alo < ahi and blo < bhi and ha[ahi - 1] == hb[bhi - 1]:
        ahi -= 1
        bhi -= 1
        match[ahi] = bhi
    budget.spend(1 + (alo - start) + (end - ahi))
    if alo == ahi or blo == bhi or budget.left <= 0:
        return []
    anchors = _anchors(ha, hb, alo, ahi, blo, bhi, budget)
    if anchors:
        out, pi, pj = [], alo, blo
        for i, j in anchors:
            match[i] = j
            if pi < i or pj < j:
                out.append((pi, i, pj, j))
            pi, pj = i + 1, j + 1
        if pi < ahi or pj < bhi:
            out.append((pi, ahi, pj, bhi))
        return out
    cap = min(GAP_STEPS, budget.left)
    pairs = _myers(ha, hb, alo, ahi, blo, bhi, cap, budget)
    if pairs is None and (ahi - alo) * (bhi - blo) <= min(GAP_STEPS, budget.left):
        pairs = _lcs_table(ha, hb, alo, ahi, blo, bhi, budget)
    for i, j in pairs or ():
        match[i] = j
    return []


def _anchors(ha: list[int], hb: list[int], alo: int, ahi: int, blo: int, bhi: int,
             budget: Budget) -> list[tuple[int, int]]:
    """(i, j) of items once in a[alo:ahi] and once in b[blo:bhi], the longest chain of them
    increasing on both sides."""
    count: dict[int, int] = {}
    where: dict[int, int] = {}
    for j in range(blo, bhi):
        h = hb[j]
        count[h] = count.get(h, 0) + 1
        where[h] = j
    seen: dict[int, int] = {}
    for i in range(alo, ahi):
        h = ha[i]
        seen[h] = seen.get(h, 0) + 1
    pairs = [(i, where[ha[i]]) for i in range(alo, ahi) if seen[ha[i]] == 1 and count.get(ha[i]) == 1]
    budget.spend(2 * (ahi - alo) + (bhi - blo))
    if not pairs:
        return []
    # longest increasing run of j by patience sorting: tops[p] = smallest j ending a chain of p + 1
    tops: list[int] = []
    top_at: list[int] = []                   # index in pairs of each pile's top
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        p = bisect_left(tops, j)
        if p == len(tops):
            tops.append(j)
            top_at.append(k)
        else:
            tops[p] = j
            top_at[p] = k
        back[k] = top_at[p - 1] if p else -1
    budget.spend(len(pairs) * max(1, len(tops).bit_length()))
    chain, k = [], top_at[-1]
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    chain.reverse()
    return chain


def _myers(ha: list[int], hb: list[int], alo: int, ahi: int, blo: int, bhi: int, cap: int,
           budget: Budget) -> list[tuple[int, int]] | None:
    """Matched (i, j) of a shortest edit script of the stretch (Myers' greedy search with
    its trace kept), or None if finding it would take more than `cap` steps."""
    n, m = ahi - alo, bhi - blo
    dmax = n + m
    size = min(dmax, int(cap ** 0.5) + 1) + 2       # round d takes >= 2d + 1 steps: d**2 <= cap
    off = size
    v = [0] * (2 * size + 1)
    trace: list[list[int]] = []
    steps = 0
    for d in range(dmax + 1):
        if d >= size - 1 or steps > cap:
            budget.spend(steps)
            return None
        trace.append(v[off - d - 1: off + d + 2])   # v before round d, k = -d-1 .. d+1
        steps += 2 * d + 3
        for k in range(-d, d + 1, 2):
            x = v[off + k + 1] if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]) else v[off + k - 1] + 1
            y = x - k
            x0 = x
            while x < n and y < m and ha[alo + x] == hb[blo + y]:
                x += 1
                y += 1
            steps += 1 + x - x0
            v[off + k] = x
            if x >= n and y >= m:
                budget.spend(steps)
                return _backtrack(trace, n, m, alo, blo)
    budget.spend(steps)
    return None


def _backtrack(trace: list[list[int]], x: int, y: int, alo: int, blo: int) -> list[tuple[int, int]]:
    pairs = []
    for d in range(len(trace) - 1, -1, -1):
        row = trace[d]                               # row[k + d + 1] = v[k]
        k = x - y
        down = k == -d or (k != d and row[k - 1 + d + 1] < row[k + 1 + d + 1])
        pk = k + 1 if down else k - 1
        px = row[pk + d + 1]
        py = px - pk
        while x > px and y > py:
            x -= 1
            y -= 1
            pairs.append((alo + x, blo + y))
        x, y = px, py
    pairs.reverse()
    return pairs


def _lcs_table(ha: list[int], hb: list[int], alo: int, ahi: int, blo: int, bhi: int,
               budget: Budget) -> list[tuple[int, int]]:
    """Matched (i, j) of a longest common subsequence, from the full table (n * m cells)."""
    n, m = ahi - alo, bhi - blo
    budget.spend(n * m)
    b = hb[blo:bhi]
    rows = [[0] * (m + 1) for _ in range(n + 1)]   # rows[i][j] = LCS of a[alo+i:], b[blo+j:]
    for i in range(n - 1, -1, -1):
        x, row, below = ha[alo + i], rows[i], rows[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if b[j] == x else max(below[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if ha[alo + i] == b[j]:
            pairs.append((alo + i, blo + j))
            i += 1
            j += 1
        elif rows[i + 1][j] >= rows[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _to_opcodes(match: list[int], n: int, m: int) -> list[tuple[str, int, int, int, int]]:
    out: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    while i < n or j < m:
        e = i
        while e < n and match[e] < 0:
            e += 1
        je = match[e] if e < n else m                # the next matched pair, or the ends
        if e > i or je > j:
            out.append(("replace" if e > i and je > j else "delete" if e > i else "insert", i, e, j, je))
        i, j = e, je
        if i < n:
            s = i
            while i < n and match[i] == j:
                i += 1
                j += 1
            out.append(("equal", s, i, s - i + j, j))
    return out
