"""The control bits of each SASS instruction (Volta and later): `nvdisasm -c -hex` prints each
instruction's 128-bit encoding as two 64-bit words after it,

        /*0010*/   LDG.E R4, desc[UR6][R2.64] ;     /* 0x0000000602047981 */
                                                    /* 0x000ea2000c1e1900 */

and the high word's top 23 bits are the scheduling controls the compiler wrote (bit 41 on of the
high word): the stall count (4 bits), yield (1), the scoreboard the instruction sets when its
result is written (3 bits; 7 = none), the one it sets when its sources are read (3), the mask
of scoreboards it waits on before it issues (6), and operand reuse (4). A scoreboard stall is an
instruction waiting on a barrier in its mask that a variable-latency producer set.
Pure: text in, frozen dataclasses out; one pass.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_INSN_RE = re.compile(r"/\*(?P<off>[0-9a-f]{4,8})\*/[^\n]*?;\s*/\*\s*0x(?P<lo>[0-9a-f]{16})\s*\*/\s*\n"
                      r"\s*/\*\s*0x(?P<hi>[0-9a-f]{16})\s*\*/")
NONE = 7


@dataclass(frozen=True)
class Control:
    stall: int
    yield_: bool
    write_sb: int          # scoreboard set when the result is written (7: none)
    read_sb: int           # scoreboard set when the sources have been read (7: none)
    wait_mask: int         # scoreboards waited on before issue (bit k = SB k)
    reuse: int

    def waits_on(self, sb: int) -> bool:
        return 0 <= sb < 6 and bool(self.wait_mask >> sb & 1)


def decode(hi: int) -> Control:
    c = hi >> 41
    return Control(c & 0xF, bool(c >> 4 & 1), c >> 5 & 7, c >> 8 & 7, c >> 11 & 0x3F, c >> 17 & 0xF)


def controls(hex_text: str) -> dict[int, Control]:
    """Instruction offset -> its control bits."""
    return {int(m["off"], 16): decode(int(m["hi"], 16)) for m in _INSN_RE.finditer(hex_text)}
