"""Pygments lexers for the stages pygments has none for: MLIR (TTIR/TTGIR) and SASS; and a
one-state Python lexer for the source panel (`python-panel`). PTX, LLVM IR and AMDGCN use
pygments' own (`ptx`, `llvm`, `amdgpu`)."""
from __future__ import annotations

from pygments.lexer import Lexer, RegexLexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

_PY_KEYWORDS = ("as assert async await break class continue def del elif else except finally for global if lambda "
                "nonlocal pass raise return try while with yield").split()
_PY_BUILTINS = ("abs all any bool callable chr dict divmod enumerate filter float format getattr hasattr hash hex "
                "id int isinstance issubclass iter len list map max min next object open ord pow print property "
                "range repr reversed round set setattr slice sorted staticmethod classmethod str sum super tuple "
                "type zip").split()


class MlirLexer(RegexLexer):
    """Triton's MLIR dialects, e.g.
    `%3 = tt.load %2, %1 : tensor<1024x!tt.ptr<f32>, #blocked> loc(#loc6)`"""
    name = "MLIR"
    aliases = ["mlir"]
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"\bloc\((#loc\d*|\"[^\"]*\"[^)]*)\)", Comment.Special),      # loc(#loc6), loc("k.py":8:16)
            (r"#loc\d*", Comment.Special),
            (r"\"(?:[^\"\\]|\\[\s\S])*\"", String),   # (was `(\\\\|\\\"|[^\"])*`: exponential in backslashes)
            (r"#[A-Za-z_][\w.]*", Name.Decorator),                          # #blocked, #ttg.shared
            (r"%[\w.$#-]+", Name.Variable),                                 # %3, %arg0, %c1024_i32
            (r"\^[\w.$-]+", Name.Label),                                    # ^bb0
            (r"@[\w.$-]+", Name.Function),                                  # @add_kernel
            (r"\b(tt|ttg|ttng|amdgpu|nvgpu|nvvm|llvm|arith|math|scf|cf|gpu|tti|rocdl)\.[\w.]+", Keyword),
            (r"\b(module|func|return|attributes|loc|dense|true|false)\b", Keyword.Reserved),
            (r"\b(tensor|memref|vector|ptr|i1|i8|i16|i32|i64|f16|bf16|f32|f64|index|none)\b", Keyword.Type),
            (r"!tt\.[\w.]+|![\w.]+", Keyword.Type),
            (r"-?\d+\.\d+(e[+-]?\d+)?", Number.Float),
            (r"0x[0-9a-fA-F]+|-?\d+", Number.Integer),
            (r"->|[=:<>*x]", Operator),
            (r"[(){}\[\],]", Punctuation),
            (r"[\w.]+", Text),
            (r".", Text),
        ]
    }


class SassLexer(RegexLexer):
    """NVIDIA SASS as nvdisasm/cuobjdump print it, e.g.
    `        /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;`"""
    name = "SASS"
    aliases = ["sass"]
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*[0-9a-fA-F]+\*/", Comment.Special),                       # /*0180*/ address
            (r"/\*.*?\*/", Comment.Multiline),
            (r"^\s*\.[\w.]+.*?$", Comment.Preproc),                         # .section, .align
            (r"(?<![.\w$])[.\w$]+:", Name.Label),      # (from a word's start: else quadratic in a long word)
            (r"@!?U?P[T\d]+", Keyword.Pseudo),                             # predicates @!P0
            (r"\b(?:S2R|S2UR|CS2R)\b", Keyword),
            (r"\bSR_[\w.]+", Name.Builtin),                                 # SR_TID.X, SR_CTAID.X
            (r"(?<![.\w])[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*(?=\s)", Keyword),  # opcode with modifiers (from a
                                                                            # token's start: quadratic from every dot)
            (r"\b(?:U?R\d+|URZ|RZ|PT|U?P\d+|UPT)\b(?:\.\w+)*", Name.Variable),
            (r"\bc\[0x[0-9a-f]+\]\[0x[0-9a-f]+\]", Name.Constant),
            (r"desc\[", Name.Builtin),
            (r"-?0x[0-9a-fA-F]+|-?\d+(\.\d+)?", Number),
            (r"[\[\](),;|!~+-]", Punctuation),
            (r"\"[^\"]*\"", String),
            (r"\S", Text),
        ]
    }


class PythonPanelLexer(RegexLexer):
    """Python as the source panel colours it: pygments' own token types for what a kernel file
    holds (keywords, `def` names, decorators, builtins, strings and docstrings, comments,
    numbers), in one state, so the panel lexes it with one regex (payload.tokenize), quicker
    than pygments' PythonLexer (docs/09-benchmark-results.md#the-servers-cpu-per-page): a
    class's every Compile draws a new source. Its rules span lines (docstrings): `multiline`
    tells the panel to lex the text whole. An f-string is one string token (pygments splits out
    its fields)."""
    name = "Python (panel)"
    aliases = ["python-panel"]
    multiline = True
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"#.*?$", Comment.Single),
            (r'(?<![\w"' "'" r'])[rRuUbB]{0,2}(?:"""[\s\S]*?(?:"""|\Z)|' "'''" r"[\s\S]*?(?:'''|\Z))", String.Doc),
            (r'[rRuUbBfF]{0,2}"(?:[^"\\\n]|\\.)*"?', String.Double),
            (r"[rRuUbBfF]{0,2}'(?:[^'\\\n]|\\.)*'?", String.Single),
            (r"@[A-Za-z_]\w*", Name.Decorator),
            (r"(?<=\bdef )[A-Za-z_]\w*", Name.Function),
            (r"(?<=\bclass )[A-Za-z_]\w*", Name.Class),
            (r"(?<=^import )[A-Za-z_][\w.]*|(?<=^from )[A-Za-z_.][\w.]*", Name.Namespace),
            (r"(?<=\bas )[A-Za-z_]\w*(?=[ \t]*(?:#.*)?$)", Name.Namespace),          # import ... as tl
            (r"\b(?:import|from)\b", Keyword.Namespace),
            (r"\b(?:True|False|None)\b", Keyword.Constant),
            (r"\b(?:and|or|not|in|is)\b", Operator.Word),
            (r"(?<!\.)\b(?:" + "|".join(_PY_KEYWORDS) + r")\b", Keyword),
            (r"\b(?:self|cls)\b", Name.Builtin.Pseudo),
            (r"(?<!\.)\b(?:" + "|".join(_PY_BUILTINS) + r")\b", Name.Builtin),
            (r"\b(?:[A-Z]\w*(?:Error|Exception|Warning)|StopIteration|KeyboardInterrupt)\b", Name.Exception),
            (r"\b__\w+__\b", Name.Variable.Magic),
            (r"(?:\d[\d_]*\.\d*|\.\d[\d_]*)(?:[eE][+-]?\d+)?j?|\d[\d_]*[eE][+-]?\d+j?", Number.Float),
            (r"0[xX][0-9a-fA-F_]+", Number.Hex),
            (r"\d[\d_]*", Number.Integer),
            (r"[A-Za-z_]\w*", Name),
            (r"\*\*=?|//=?|<<=?|>>=?|->|:=|[-+*/%@&|^~<>=!]=?|\.", Operator),
            (r"[()\[\]{},:;]", Punctuation),
            (r"\\\n|.", Text),
        ]
    }


_OURS = {"mlir": MlirLexer, "sass": SassLexer, "python-panel": PythonPanelLexer}


def lexer_for(alias: str) -> Lexer:
    """The lexer named in the stage table (ours first, then pygments'). Leading blank lines
    are kept (pygments strips them by default): panel line numbers must be the text's, e.g.
    an Inductor kernel file starts with an empty line."""
    if alias in _OURS:
        return _OURS[alias](stripnl=False)
    return get_lexer_by_name(alias, stripnl=False)
