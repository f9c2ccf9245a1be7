"""A small, safe evaluator of the arithmetic that sweeps and catalog entries
write: `set` templates (`"{R_ms/2 - 1}ms"`) and `expr` metrics
(`"abs(delay_ratio / delta - 1)"`).

It walks Python's syntax tree of the expression and allows only numbers,
names of the parameters given, `+ - * / // % **`, unary signs, parentheses
and the functions `min max round abs int float`. Nothing else is reachable
(no attributes, subscripts, strings, lambdas or other calls), so an entry
cannot run code, and work is bounded: the text is at most
`MAX_LENGTH` characters and an integer power may have at most `MAX_BITS`
bits, so `{10**10**10}` is refused at once rather than computed.

Errors: `ValueError` for what the evaluator does not allow or cannot parse
(an error of the entry); `ArithmeticError` (`ZeroDivisionError`,
`OverflowError`) for arithmetic that has no value at these parameters, which
a caller may treat as a missing value.

Hand-written rather than a dependency: the one candidate on PyPI
(simpleeval) evaluates far more of Python than we need, and its sandbox has
been escaped before; what we need is these sixty lines.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from typing import Any

#: the longest expression accepted, in characters
MAX_LENGTH = 1000
#: the largest integer a power may produce, in bits (about 1,200 digits)
MAX_BITS = 4096

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCS = {"min": min, "max": max, "round": round, "abs": abs, "int": int, "float": float}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        if max(base.bit_length(), 1) * exponent > MAX_BITS:
            raise ValueError(f"{base}**{exponent} is too large (more than {MAX_BITS} bits)")
    return operator.pow(base, exponent)


def evaluate(expr: str, params: Mapping[str, Any]) -> Any:
    """The value of `expr` with the names in `params` bound to their values.
    A parameter may be any value, but only numbers take part in arithmetic."""
    if not isinstance(expr, str):
        raise ValueError(f"an expression is a string, not {type(expr).__name__}")
    text = expr.strip()
    if len(text) > MAX_LENGTH:
        raise ValueError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"{{{expr}}}: {e.msg}") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"{{{expr}}}: nested too deeply") from None

    def operand(node: ast.AST) -> Any:
        v = ev(node)
        if not _number(v):
            raise ValueError(f"{{{expr}}}: {v!r} is not a number")
        return v

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and _number(node.value):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in params:
                raise ValueError(f"unknown parameter {node.id!r} in {{{expr}}}; known: {', '.join(params) or 'none'}")
            return params[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = operand(node.left), operand(node.right)
            if isinstance(node.op, ast.Pow):
                return _power(left, right)
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = operand(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
            if node.keywords:
                raise ValueError(f"{{{expr}}}: {node.func.id}() takes no keyword arguments here")
            try:
                return _FUNCS[node.func.id](*[operand(a) for a in node.args])
            except TypeError as e:
                raise ValueError(f"{{{expr}}}: {e}") from None
        raise ValueError(
            f"unsupported expression {{{expr}}}: numbers, parameter names, + - * / // % **, "
            "parentheses and min, max, round, abs, int, float only"
        )

    try:
        return ev(tree)
    except RecursionError:
        raise ValueError(f"{{{expr}}}: nested too deeply") from None
