"""GitHub Actions expressions (``if:`` conditions, ``${{ … }}``) evaluated
against what is known of one run: a push to the default branch on this
machine.  What cannot be known here (``secrets.X``, ``github.event.…``,
``steps.x.outputs.y``, ``hashFiles(…)``) evaluates to :data:`UNKNOWN`, and
every operator but ``&&`` and ``||`` passes it on: ``false && unknown`` is
false, ``true || unknown`` is true, and anything else with an unknown in it
is unknown, which a caller treats as "not here".

The forms read: literals (``'text'``, numbers, ``true``, ``false``,
``null``), property access (``matrix.python-version``, ``github['ref']``),
``!``, ``&&``, ``||``, ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``,
parentheses, and the functions ``startsWith``, ``endsWith``, ``contains``,
``format``, ``join``, ``fromJSON``, ``toJSON``, ``success``, ``always``,
``failure``, ``cancelled``.  Comparison follows GitHub's: strings compare
without regard to case, values of different types compare as numbers.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from stepkit.lazyregex import lazy_compile


class _Unknown:
    """A value this machine cannot know."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


class Closed(dict[str, Any]):
    """A context whose keys are all known (``matrix``, ``env``): a missing key
    is ``null``, not unknown.  ``touched`` collects the keys read."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.touched: set[str] = set()


_TOKEN = lazy_compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?))"
    r"|(?P<name>[A-Za-z_][\w-]*)|(?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\].,*]))"
)


def _tokens(text: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    at = 0
    text = text.strip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        if not match or match.end() == at:
            raise ValueError(f"cannot read {text[at:]!r}")
        at = match.end()
        if match["string"] is not None:
            found.append(("value", match["string"][1:-1].replace("''", "'")))
        elif match["number"] is not None:
            found.append(
                (
                    "value",
                    float(int(match["number"], 16) if "x" in match["number"] else match["number"]),
                )
            )
        elif match["name"] is not None:
            word = match["name"]
            literal = {"true": True, "false": False, "null": None}
            found.append(("value", literal[word]) if word in literal else ("name", word))
        else:
            found.append(("op", match["op"]))
    return found


def truthy(value: Any) -> Any:
    """GitHub's truthiness; UNKNOWN stays unknown."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (False, 0, "", None)


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return math.nan
    return math.nan


def _compare(op: str, left: Any, right: Any) -> Any:
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    if isinstance(left, str) and isinstance(right, str):
        a: Any = left.casefold()
        b: Any = right.casefold()
    elif type(left) is type(right) and not isinstance(left, (dict, list)):
        a, b = left, right
    else:
        if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
            return (left is right) if op == "==" else (left is not right) if op == "!=" else False
        a, b = _number(left), _number(right)
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if isinstance(a, float) and isinstance(b, float) and (math.isnan(a) or math.isnan(b)):
        return False
    try:
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    except TypeError:
        return False


def as_text(value: Any) -> str:
    """A value as ``${{ … }}`` writes it into a string."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _contains(haystack: Any, needle: Any) -> Any:
    if isinstance(haystack, list):
        return any(_compare("==", item, needle) is True for item in haystack)
    return as_text(needle).casefold() in as_text(haystack).casefold()


def _format(template: Any, *args: Any) -> str:
    return re.sub(
        r"\{(\d+)\}",
        lambda m: as_text(args[int(m[1])]) if int(m[1]) < len(args) else m[0],
        as_text(template),
    )


def _from_json(text: Any) -> Any:
    try:
        return json.loads(as_text(text))
    except ValueError:
        return UNKNOWN


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "startswith": lambda a, b: as_text(a).casefold().startswith(as_text(b).casefold()),
    "endswith": lambda a, b: as_text(a).casefold().endswith(as_text(b).casefold()),
    "contains": _contains,
    "format": _format,
    "join": lambda items, sep=",": (
        as_text(sep).join(as_text(i) for i in items) if isinstance(items, list) else as_text(items)
    ),
    "fromjson": _from_json,
    "tojson": lambda value: json.dumps(value),
    # the statuses of a run in which every earlier step passed
    "success": lambda: True,
    "always": lambda: True,
    "failure": lambda: False,
    "cancelled": lambda: False,
}


class _Parser:
    def __init__(self, tokens: list[tuple[str, Any]], context: dict[str, Any]):
        self.tokens = tokens
        self.at = 0
        self.context = context

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, op: str) -> bool:
        if self.peek() == ("op", op):
            self.at += 1
            return True
        return False

    def expect(self, op: str) -> None:
        if not self.take(op):
            raise ValueError(f"expected {op}")

    def either(self) -> Any:
        left = self.both()
        while self.take("||"):
            right = self.both()
            if truthy(left) is True:
                continue
            left = right if truthy(left) is False or truthy(right) is True else UNKNOWN
        return left

    def both(self) -> Any:
        left = self.comparison()
        while self.take("&&"):
            right = self.comparison()
            if truthy(left) is False:
                continue
            left = right if truthy(left) is True or truthy(right) is False else UNKNOWN
        return left

    def comparison(self) -> Any:
        left = self.unary()
        while (token := self.peek()) and token[0] == "op" and token[1] in _COMPARISONS:
            self.at += 1
            left = _compare(token[1], left, self.unary())
        return left

    def unary(self) -> Any:
        if self.take("!"):
            value = truthy(self.unary())
            return UNKNOWN if value is UNKNOWN else not value
        return self.postfix()

    def postfix(self) -> Any:
        value = self.primary()
        while True:
            if self.take("."):
                token = self.peek()
                if token is None or token[0] != "name" and token != ("op", "*"):
                    raise ValueError("expected a property name")
                self.at += 1
                value = _property(value, token[1])
            elif self.take("["):
                key = self.either()
                self.expect("]")
                value = _property(value, key)
            else:
                return value

    def primary(self) -> Any:
        token = self.peek()
        if token is None:
            raise ValueError("unexpected end")
        self.at += 1
        kind, value = token
        if kind == "value":
            return value
        if token == ("op", "("):
            inner = self.either()
            self.expect(")")
            return inner
        if kind == "name" and self.take("("):
            args = []
            if not self.take(")"):
                args.append(self.either())
                while self.take(","):
                    args.append(self.either())
                self.expect(")")
            function = _FUNCTIONS.get(value.lower())
            if function is None or any(arg is UNKNOWN for arg in args):
                return UNKNOWN
            try:
                return function(*args)
            except TypeError:
                raise ValueError(f"bad call of {value}") from None
        if kind == "name":
            return self.context.get(value, UNKNOWN)
        raise ValueError(f"unexpected {value}")


_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


def _property(value: Any, key: Any) -> Any:
    if value is UNKNOWN or key is UNKNOWN or key == "*":
        return UNKNOWN
    if isinstance(value, Closed):
        value.touched.add(as_text(key))
        return value.get(as_text(key))
    if isinstance(value, dict):
        return value.get(as_text(key), UNKNOWN)
    if isinstance(value, list) and isinstance(key, float) and key.is_integer():
        return value[int(key)] if 0 <= key < len(value) else None
    return None if value is None or isinstance(value, (str, bool, float)) else UNKNOWN


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    """The value of ``expression`` (``${{ }}`` around it or not); UNKNOWN
    when it reads what is not known here or cannot be read."""
    text = expression.strip()
    whole = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.DOTALL)
    if whole and "${{" not in whole[1]:
        text = whole[1]
    elif "${{" in text:
        return substitute(text, context)  # `if: ${{ a }} && b` is a string: truthy when not empty
    try:
        parser = _Parser(_tokens(text), context)
        value = parser.either()
        if parser.peek() is not None:
            raise ValueError("trailing tokens")
    except (ValueError, KeyError, IndexError):
        return UNKNOWN
    return value


def substitute(text: str, context: dict[str, Any]) -> Any:
    """``text`` with each ``${{ … }}`` replaced by its value; UNKNOWN when
    one of them is."""
    parts: list[str] = []
    at = 0
    for match in re.finditer(r"\$\{\{(.*?)\}\}", text, re.DOTALL):
        value = evaluate(match[1], context)
        if value is UNKNOWN:
            return UNKNOWN
        parts += [text[at : match.start()], as_text(value)]
        at = match.end()
    return "".join(parts) + text[at:]


def condition(expression: str, context: dict[str, Any]) -> Any:
    """An ``if:``: True, False, or UNKNOWN."""
    return truthy(evaluate(expression, context))
