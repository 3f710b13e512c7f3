"""Mask secrets in text before it is shown to a model or written to disk.

What is masked (replaced by ``[REDACTED]``; the key or name in front stays):

- the values of secret-named environment variables, wherever they appear:
  any variable whose name holds ``PASSWORD``, ``PASSWD``, ``TOKEN``,
  ``SECRET``, ``CREDENTIAL`` or ``AUTH`` (not ``AUTHOR``), or ends in
  ``PASS``, ``_PWD`` or ``_KEY`` (``PGPASSWORD``, ``MYSQL_PWD``,
  ``REDISCLI_AUTH``, ``SSHPASS``, ``ANTHROPIC_API_KEY``; values of 6+
  characters);
- token formats: Anthropic and OpenAI (``sk-…``), GitHub (``ghp_…``,
  ``github_pat_…``), GitLab (``glpat-…``), AWS access key ids (``AKIA…``),
  Slack (``xox?-…``), Stripe, npm, PyPI, Google API keys, SendGrid, Hugging
  Face, JWTs, ``Bearer …``;
- the value assigned to a key whose last word names a secret: password,
  passwd, passphrase, secret, token, credential(s), creds, auth,
  authorization, and api / access / private / secret / encryption / signing /
  master / account / shared / client *key* (``DB_PASSWORD=…``,
  ``db.password: …``, ``"clientSecret": "…"``, ``X-Api-Key: …``); ``pass``
  and ``pwd`` only after another word (``DB_PASS``, not ``PASS:`` or
  ``PWD=``).  Env, shell, INI, TOML, YAML, JSON and repr forms: a quoted
  value is masked whole, whatever it holds; an unquoted one up to the end of
  its word, or to the end of the line when the key opens a config line
  (``key: …``, ``key = …``, or an all-lower-case INI key ``password=…``).  References are not values: ``$VAR``,
  ``${{ … }}``, ``null``, calls (``get_token()``), names of secrets
  (``api_key = api_key``); nor is a key that only starts with a secret word
  (``password_length = 12``) or prose (``the token expired``);
- passwords on command lines: ``mysql -p…`` (glued to ``-p``), ``sshpass
  -p …``, ``curl -u user:…``; an env-style ``PGPASSWORD=…`` is an assignment;
- the text of XML elements named for a secret (``<password>…</password>``);
- the password in a URL (``postgres://user:…@host``) and the secret path of
  Slack, Discord, Teams and Zapier webhook URLs;
- PEM private key blocks (``-----BEGIN … PRIVATE KEY-----`` to ``-----END
  …``), on one line or across lines, indented or behind a line prefix.

The key words and value shapes follow detect-secrets' keyword plugin and
gitleaks' generic-api-key rule; the token formats, from both rule sets, are
one table of their own (:mod:`stepkit.credentials`).

Speed: Python's regex engine makes one pass over the text per pattern, and
ordinary log text holds the literals most shapes start with (``-``, ``:``,
``token``).  So one RE2 set (:func:`_prefilter`: a DFA, one pass for every
shape at once) first says which shapes can match in a text, then in each
block of about :data:`_BLOCK` characters of whole lines; only those shapes run,
on that block only.  Each shape's set regex is a superset of the shape (its
literal and what must follow it), so the shapes alone still decide what is a
secret.  The matches become spans, merged leftmost first.

:class:`Redactor` masks a stream fed in pieces (a gate's output): whole lines
are masked as they complete, a PEM block that spans pieces is masked to its
end, and a line longer than :data:`LINE_LIMIT` is passed on in pieces cut
where no secret straddles the cut.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from stepkit.credentials import TOKEN_FORMATS, TokenFormat
from stepkit.lazyregex import lazy_compile

MASK = "[REDACTED]"

#: A line longer than this is masked and passed on before its newline comes.
LINE_LIMIT = 1024 * 1024
#: What a piece of a long line keeps back for the next one: longer than any
#: shape reaches, so a secret is never cut in two.
_WINDOW = 64 * 1024
#: Text kept before a piece of a long line, for looking back at a key.
_CONTEXT = 256

#: Environment variable names whose values are secrets wherever they appear
#: (``PGPASSWORD``, ``MYSQL_PWD``, ``REDISCLI_AUTH``, ``SSHPASS``, ``GH_TOKEN``);
#: ``AUTHOR`` is a name, not a secret (``GIT_AUTHOR_NAME``).
_SECRET_ENV_NAME = lazy_compile(
    r"[A-Z0-9_]*(?:PASSWORD|PASSWD|TOKEN|SECRET|CREDENTIAL|AUTH(?!OR))[A-Z0-9_]*"
    r"|[A-Z0-9_]*(?:PASS|_PWD|_KEY)"
)
#: A shorter value is too likely to be an ordinary word to mask everywhere.
_SECRET_ENV_MIN_LENGTH = 6

#: A span of text and what replaces it.
Span = tuple[int, int, str]


@dataclass(frozen=True)
class _Shape:
    """One secret shape: its pattern (searched in the lower-cased text when
    ``lower``) and how a match becomes a span (None: not a secret after all)."""

    pattern: re.Pattern[str]
    span: Callable[[re.Match[str], str, int], Span | None]
    lower: bool = False


def _whole(match: re.Match[str], text: str, end: int) -> Span:
    return match.start(), match.end(), MASK


def _group(name: str) -> Callable[[re.Match[str], str, int], Span]:
    def span(match: re.Match[str], text: str, end: int) -> Span:
        return match.start(name), match.end(name), MASK

    return span


def _after(letters: str) -> Callable[[re.Match[str], str, int], Span | None]:
    """The match and the character before it, which must be one of ``letters``
    at a word start (patterns that start past their first letter: ``k_live_``)."""

    def span(match: re.Match[str], text: str, end: int) -> Span | None:
        at = match.start() - 1
        if at < 0 or text[at] not in letters or (at > 0 and text[at - 1].isalnum()):
            return None
        return at, match.end(), MASK

    return span


# -- token formats (stepkit.credentials) --------------------------------------------


def _token(format: TokenFormat) -> _Shape:
    if format.starts_with:
        return _Shape(lazy_compile(format.shape), _after(format.starts_with))
    if "(?P<value>" in format.shape:
        return _Shape(lazy_compile(format.shape), _group("value"))
    return _Shape(lazy_compile(format.shape), _whole)


_TOKENS = tuple(_token(format) for format in TOKEN_FORMATS)

# -- URLs ------------------------------------------------------------------------------


def _url_password(match: re.Match[str], text: str, end: int) -> Span | None:
    if _NOT_A_VALUE.fullmatch(match["password"]):
        return None
    return match.start("password"), match.end("password"), MASK


_URLS = (
    _Shape(
        lazy_compile(r"://[^\s:/?#@\"'<>\[\]]{0,128}:(?P<password>[^\s/?#\"'<>]{1,256})(?=@)"),
        _url_password,
    ),
    _Shape(
        lazy_compile(
            r"hooks\.(?:slack\.com/(?:services|workflows|triggers)|zapier\.com/hooks/catch)/"
            r"(?P<path>[\w\-][^\s\"'<>)\]\\]{3,1023})"
        ),
        _group("path"),
    ),
    _Shape(
        lazy_compile(r"discord(?:app)?\.com/api/webhooks/(?P<path>[\w\-][^\s\"'<>)\]\\]{3,1023})"),
        _group("path"),
    ),
    _Shape(
        lazy_compile(r"\.webhook\.office\.com/webhookb2/(?P<path>[\w\-][^\s\"'<>)\]\\]{3,1023})"),
        _group("path"),
    ),
)

# -- command lines and markup ------------------------------------------------------

#: A password argument: quoted (the inside is masked) or one word.
_ARG_VALUE = r"(?:'(?P<sq>[^'\n]{1,1024})'|\"(?P<dq>[^\"\n]{1,1024})\"|(?P<word>[^\s'\"]{1,1024}))"


def _argument(match: re.Match[str], text: str, end: int) -> Span | None:
    name = match.lastgroup or "word"
    if _NOT_A_VALUE.fullmatch(match[name]):
        return None
    return match.start(name), match.end(name), MASK


_COMMANDS = (
    # mysql -pSECRET (the password is glued to -p; "-p SECRET" makes mysql prompt)
    _Shape(
        lazy_compile(r"(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,512}?[ \t]-p" + _ARG_VALUE),
        _argument,
    ),
    # sshpass [options] -p SECRET
    _Shape(lazy_compile(r"sshpass(?:[ \t]+-[^p\s]\S*)*[ \t]+-p[ \t]*" + _ARG_VALUE), _argument),
    # curl -u user:SECRET, curl --user=user:SECRET
    _Shape(
        lazy_compile(
            r"curl\b[^\n]{0,1024}?[ \t](?:-u|--user)(?:[ \t]+|=)['\"]?[^\s:'\"]{1,256}:"
            r"(?P<word>[^\s'\"]{1,1024})"
        ),
        _argument,
    ),
)


def _element(match: re.Match[str], text: str, end: int) -> Span | None:
    if _NOT_A_VALUE.fullmatch(match["value"].strip()):
        return None
    return match.start("value"), match.end("value"), MASK


#: ``<password>…</password>``, ``<db:Password a="b">…</db:Password>`` (searched lower-cased).
_ELEMENTS = (
    _Shape(
        lazy_compile(
            r"<(?P<tag>[\w.:\-]{0,64}?(?:password|passwd|secret|token|apikey|api_key"
            r"|credentials?))(?:[ \t][^<>\n]{0,256})?>(?P<value>[^<\n]{1,1024})</(?P=tag)>"
        ),
        _element,
        lower=True,
    ),
)

# -- PEM blocks ------------------------------------------------------------------------

_PEM_MARKER = r"PRIVATE KEY(?: BLOCK)?-----"
_PEM_BEGIN = lazy_compile(rf"-----BEGIN[A-Z0-9 ]{{0,40}}{_PEM_MARKER}")
_PEM_END = lazy_compile(rf"-----END[A-Z0-9 ]{{0,40}}{_PEM_MARKER}")
#: A block on one line (JSON with \n escapes), or a BEGIN whose END is past 16 KiB.
_PEM_ONE_LINE = (
    _Shape(
        lazy_compile(
            rf"{_PEM_BEGIN.pattern}(?:[^\n]{{0,16384}}?{_PEM_END.pattern}|[^\n]{{0,16384}})"
        ),
        _whole,
    ),
)
#: A line inside a PEM block (after the BEGIN line's prefix): base64, a header, or empty.
_PEM_BODY = lazy_compile(
    r"[ \t]*(?:[A-Za-z0-9+/=]{1,256}|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset):[^\n]{0,256})?"
    r"[ \t\r]*"
)

# -- assignments (detect-secrets' keyword plugin, gitleaks' generic-api-key) ----------

#: ``<kind> key`` names a secret (``api_key``, ``AccountKey``); ``key`` alone does not.
_KEY_KINDS = (
    "api",
    "access",
    "private",
    "secret",
    "encryption",
    "signing",
    "master",
    "account",
    "shared",
    "client",
)
#: The secret words, by the literal their pattern starts with (lower case).
_KEY_WORDS = {
    "pass": "pass(?:word|wd|phrase)?",
    "pwd": "pwd",
    "secret": "secret",
    "token": "token",
    "cred": "cred(?:entials?|s)",
    "auth": "auth(?:orization)?",
    "key": "key",
}
#: Words that name a secret only after another word of the key (``DB_PASS``).
_AFTER_ANOTHER_WORD = ("pass", "pwd")
_KIND_BEFORE_KEY = lazy_compile(rf"(?:{'|'.join(_KEY_KINDS)})[_.\-]?$")
_SECRET_WORD = lazy_compile(
    rf"(?:(?:{'|'.join(_KEY_KINDS)})[_.\-]?key|"
    + "|".join(w for k, w in _KEY_WORDS.items() if k != "key")
    + r")\d{0,4}"
)
_VALUE_END = r"\s\"'`,;&<>()\[\]{}"
_ASSIGNED = (
    r"\d{0,4}(?:\\?[\"'])?[ \t]{0,4}"  # digits, the key's closing quote (escaped inside a JSON string)
    r"(?P<sep>=>|:=|=(?![=~])|:(?=[ \t\"'\\])|(?<=[\"']):)"
    r"[ \t]{0,4}(?:(?:bearer|basic|token|digest)[ \t]+)?"  # an auth scheme stays
    r"(?P<value>\"(?:[^\"\\\n]|\\.){1,8192}\"|'(?:[^'\\\n]|\\.){1,8192}'"
    r"|\\\"(?:[^\"\\\n]|\\[^\"\n]){1,8192}\\\""
    rf"|(?P<bare>[\"']?[^{_VALUE_END}\\](?:[^{_VALUE_END}\\]|\\(?![nrt\"\\])){{0,1023}}|(?=[(\[{{<])))"
)

#: Values that are not secrets: empty words, masks, placeholders, references, YAML block indicators.
_NOT_A_VALUE = lazy_compile(
    r"(?i:null|none|nil|undefined|true|false)|\*+|\[REDACTED\]|<[^<>]*>|[|>][-+]?"
    r"|\$\{?[A-Z_][A-Z0-9_]*\}?|\$\{\{.*\}\}|\{\{.*\}\}|%[A-Za-z_]\w*%|\$\(.*\)",
    re.DOTALL,
)
_NAME = lazy_compile(r"[A-Za-z_][\w.]*")
#: An environment variable's name: the secret word may end it unseparated (``PGPASSWORD``).
_ENV_NAME = lazy_compile(r"[A-Z][A-Z0-9_]*")
_LINE_HEAD = lazy_compile(r"[ \t]*(?:(?:export|set|setx|declare)[ \t]+|-[ \t]+)?")


def _assignment(match: re.Match[str], text: str, end: int) -> Span | None:
    """The value of ``key <sep> value`` when the key's last word names a secret."""
    word_at = match.start()
    if match["word"] == "key":
        kind = _KIND_BEFORE_KEY.search(text[max(0, word_at - 13) : word_at].lower())
        if kind is None:
            return None
        word_at -= len(kind.group())
    key_at = _key_start(text, word_at)
    env_style = key_at < word_at and _ENV_NAME.fullmatch(text, key_at, match.end("word"))
    if not (_part_starts(text, word_at) or env_style) or (
        key_at == word_at and match["word"] in _AFTER_ANOTHER_WORD
    ):
        return None
    if key_at > 0 and text[key_at - 1] in "/\\":
        return None  # a path (/etc/passwd: No such file)
    value_at, value = match.start("value"), text[match.start("value") : match.end("value")]
    bare = match["bare"]
    if bare is None:  # quoted: the inside, whatever it holds
        quote = 2 if value.startswith("\\") else 1
        if _NOT_A_VALUE.fullmatch(value[quote:-quote]):
            return None
        return value_at + quote, match.end() - quote, MASK
    after = match.end("bare")
    if after < end and text[after] in "([":
        return None  # a call or a subscript: code, not a value
    if not env_style and _NAME.fullmatch(value) and _names_secret(value):
        return None  # api_key = api_key: a name, not a value (PGPASSWORD=pgSecret is one)
    if _opens_config_line(match, text, key_at):
        line_end = text.find("\n", value_at, min(end, value_at + 2048))
        value = text[value_at : line_end if line_end != -1 else min(end, value_at + 2048)].rstrip()
    if not value or _NOT_A_VALUE.fullmatch(value):
        return None
    return value_at, value_at + len(value), MASK


_ASSIGNMENTS = tuple(
    _Shape(lazy_compile(f"(?P<word>{word}){_ASSIGNED}"), _assignment, lower=True)
    for word in _KEY_WORDS.values()
)


def _key_start(text: str, word_at: int) -> int:
    """Where the key that ends in the word at ``word_at`` starts."""
    at, lowest = word_at, max(0, word_at - 128)
    while at > lowest and (text[at - 1].isalnum() or text[at - 1] in "_.-"):
        if at >= 2 and text[at - 2] == "\\" and text[at - 1] in "nrt":
            break  # an escaped newline or tab before the key (inside a JSON string)
        at -= 1
    return at


def _part_starts(text: str, at: int) -> bool:
    """True when a word of a name starts at ``at``: after a separator or at a
    camel-case hump (``dbPassword``, ``DBPassword``; not ``mypassword``)."""
    if at == 0 or not text[at - 1].isalpha():
        return True
    if not text[at].isupper():
        return False
    return text[at - 1].islower() or (at + 1 < len(text) and text[at + 1].islower())


def _names_secret(name: str) -> bool:
    """True when ``name`` ends in a secret word (``self.api_key``, ``password``)."""
    lower = name.lower()
    return any(
        _part_starts(name, at) and _SECRET_WORD.fullmatch(lower, at) for at in range(len(name))
    )


def _opens_config_line(match: re.Match[str], text: str, key_at: int) -> bool:
    """A config line (``key: value``, ``key = value``, ``- key: value``): the
    rest of the line is the value; ``KEY=value`` and ``--key=value`` take one word."""
    sep = match["sep"]
    spaced = " " in text[match.end("word") : match.start("value")]
    # an INI or properties line (an all-lower-case key) may glue "=" to its key; a
    # KEY=value or camelCase=value at a line start takes one word (shell, logs)
    ini_key = text[key_at : match.end("word")].islower()
    if text[key_at] == "-" or not (sep == ":" or (sep == "=" and (spaced or ini_key))):
        return False
    head_end = key_at - 1 if key_at > 0 and text[key_at - 1] in "\"'" else key_at
    newline = text.rfind("\n", max(0, head_end - 64), head_end)
    if newline == -1 and head_end > 64:
        return False
    return _LINE_HEAD.fullmatch(text, newline + 1, head_end) is not None


#: The secret words as the prefilter finds them: ``pass`` and ``pwd`` after
#: another word of the key, ``key`` after its kind (what :func:`_assignment` requires).
_KEY_WORDS_PREFILTER = tuple(
    r"(?:[a-z0-9_.\-]pass|pass(?:word|wd|phrase))"
    if k == "pass"
    else rf"[a-z0-9_.\-]{w}"
    if k == "pwd"
    else rf"(?:{'|'.join(_KEY_KINDS)})[_.\-]?{w}"
    if k == "key"
    else w
    for k, w in _KEY_WORDS.items()
)
#: What follows the word: a separator, then a quote, a bracket or a bare value that
#: ends where a value ends (not at ``(`` or ``[``: a call or subscript), or a long one
#: (RE2 counts to 1,000 at most).
_ASSIGNED_PREFILTER = (
    r"\d{0,4}(?:\\?[\"'])?[ \t]{0,4}(?:=>|:=|[=:])[ \t]{0,4}(?:(?:bearer|basic|token|digest)[ \t]+)?"
    rf"(?:[\"'\\(\[{{<]|[^{_VALUE_END}\\]+(?:[\s\"'`,;&<>)\]{{}}\\]|$)|[^{_VALUE_END}\\]{{1000}})"
)
#: Every shape, each with a regex (RE2 syntax) that matches wherever the
#: shape can: its literal and, where ordinary text holds that literal often
#: (``token``, ``://``, ``curl``), what must follow it.  A superset by design:
#: the shape itself decides.
_SHAPES: tuple[tuple[_Shape, str], ...] = (
    (_PEM_ONE_LINE[0], r"-----BEGIN"),
    *((shape, format.literal) for shape, format in zip(_TOKENS, TOKEN_FORMATS, strict=True)),
    *zip(
        _URLS,
        (
            r"://[^\s:/?#@\"'<>\[\]]{0,128}:[^\s/?#\"'<>]{1,256}@",
            r"hooks\.(?:slack|zapier)\.com/",
            r"discord(?:app)?\.com/api/webhooks/",
            r"\.webhook\.office\.com/webhookb2/",
        ),
        strict=True,
    ),
    *zip(
        _COMMANDS,
        (r"(?:mysql|mariadb)[^\n]*[ \t]-p", r"sshpass[^\n]*-p", r"curl[^\n]*[ \t](?:-u|--user)"),
        strict=True,
    ),
    (
        _ELEMENTS[0],
        r"(?i)(?:password|passwd|secret|token|apikey|api_key|credential)[^<>\n]*>[^<\n]+</",
    ),
    *(
        (shape, rf"(?i){word}{_ASSIGNED_PREFILTER}")
        for shape, word in zip(_ASSIGNMENTS, _KEY_WORDS_PREFILTER, strict=True)
    ),
)
#: Characters of a text the prefilter looks at in one go (whole lines): the
#: shapes it finds run on that block only.
_BLOCK = 2048
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class _Prefilter(Protocol):
    """What the code asks of an RE2 set (google-re2 ships no types)."""

    def Match(self, text: bytes | memoryview) -> list[int] | None:
        """The indexes of the patterns found in ``text``; None for none."""


_prefilter_set: _Prefilter | None = None
#: Characters of commands' output (a stream, :class:`Redactor`) a process masks
#: with every shape's own regex before it builds the prefilter: building the RE2
#: set takes about 50 ms, what masking 2 MB without it costs, and most commands
#: print a few kilobytes; it is built while the command that printed more runs,
#: as stepkit waits for it.
PLAIN_CHARS = 256 * 1024
_plain_left = PLAIN_CHARS
#: Characters of whole texts (:func:`redact`: a checkpoint's part, a prompt, a
#: handoff) a process masks with every shape's own regex before it builds the
#: prefilter: once masking without it has cost what building it costs (ski
#: rental).  A run masks a few hundred KB of them (the installed files'
#: fingerprint alone ~170 KB): with one budget for both, the build landed in
#: whichever of its nodes crossed the line (the handoff's), to save milliseconds.
TEXT_PLAIN_CHARS = 2 * 1024 * 1024
_text_left = TEXT_PLAIN_CHARS


def _prefilter() -> _Prefilter:
    """One RE2 set of every shape's regex: a single pass over a block says
    which shapes can match in it (built on first use)."""
    global _prefilter_set
    if _prefilter_set is None:
        import re2

        options = re2.Options()
        options.max_mem = 64 << 20
        built = re2.Set.SearchSet(options)
        for _, pattern in _SHAPES:
            built.Add(pattern)
        built.Compile()
        _prefilter_set = built
    return _prefilter_set


def _prefilter_for(size: int, stream: bool) -> _Prefilter | None:
    """The prefilter for a span of ``size`` characters of a stream or of a
    whole text; None (every shape runs, which the prefilter only ever
    narrows) while this process has masked fewer than :data:`PLAIN_CHARS`
    characters of streams, or :data:`TEXT_PLAIN_CHARS` of whole texts."""
    global _plain_left, _text_left
    if _prefilter_set is None:
        if stream and size <= _plain_left:
            _plain_left -= size
            return None
        if not stream and size <= _text_left:
            _text_left -= size
            return None
    return _prefilter()


def redact(text: str, env: tuple[str, ...] | None = None) -> str:
    """Return ``text`` with secrets masked (see the module docstring);
    ``env``: :func:`secret_env_values`, from a caller masking many texts at once."""
    if not text:
        return text
    return Redactor(env, stream=False)._mask_lines(text, 0)


def secret_env_values() -> tuple[str, ...]:
    """The values of this process's secret environment variables, longest first."""
    # rescanned on every call (~20 us): a cache keyed on anything cheaper than
    # the values themselves misses a secret that replaced another one
    values = {
        value
        for name, value in os.environ.items()
        if _SECRET_ENV_NAME.fullmatch(name.upper()) and len(value) >= _SECRET_ENV_MIN_LENGTH
    }
    # longest first so a value that contains another is masked whole
    return tuple(sorted(values, key=len, reverse=True))


class Redactor:
    """Masks a stream of text fed in pieces; what :meth:`feed` returns is
    final.  Whole lines are masked as they complete; a partial line waits for
    its newline, or, past :data:`LINE_LIMIT`, is passed on in pieces cut where
    no secret straddles the cut.  ``stream=False``: one whole text
    (:func:`redact`), which builds the prefilter later than a stream does."""

    def __init__(self, env: tuple[str, ...] | None = None, stream: bool = True) -> None:
        self._stream = stream
        self._env = secret_env_values() if env is None else env
        self._env_bytes = tuple(value.encode("utf-8", "surrogateescape") for value in self._env)
        self._window = max(_WINDOW, 2 * max(map(len, self._env), default=0))
        self._pending = ""
        self._context = ""  # the unmasked text just before _pending, on its line
        self._pem: str | None = None  # inside a PEM block: the prefix of its BEGIN line
        self._pem_newline_owed = False

    def feed(self, text: str) -> str:
        """Take the next piece; return the masked text that is now final."""
        newline = text.rfind("\n")
        if newline == -1:
            self._pending += text
            if len(self._pending) < LINE_LIMIT:
                return ""
            return self._flush_long_line()
        lines = self._context + self._pending + text[: newline + 1]
        start = len(self._context)
        self._pending, self._context = text[newline + 1 :], ""
        return self._mask_lines(lines, start)

    def feed_ascii(self, data: bytes) -> bytes | None:
        """Take the next piece as bytes, when one RE2 pass over it says that no
        shape and no secret value can match in its whole lines: return those
        lines unchanged (what is final) and keep its partial last line.  None,
        taking nothing, when ``data`` must go through :meth:`feed` as text:
        not ASCII (bytes and characters then differ), no newline, a candidate
        shape or value in it, an open PEM block, or this process has not yet
        masked the :data:`PLAIN_CHARS` that pay for building the prefilter."""
        if (
            self._pem is not None
            or self._context
            or not data.isascii()
            or not self._pending.isascii()
        ):
            return None
        newline = data.rfind(b"\n")
        if newline == -1:
            return None
        lines = (
            b"".join((self._pending.encode("ascii"), memoryview(data)[: newline + 1]))
            if self._pending
            else data[: newline + 1]
        )
        if len(lines) <= _BLOCK:
            return None  # masking a few lines as text costs less than deciding here
        if _prefilter_set is None and len(lines) <= _plain_left:
            return None
        if _may_match(lines) or any(value in lines for value in self._env_bytes):
            return None
        self._pending = data[newline + 1 :].decode("ascii")
        return lines

    def take_pending(self) -> str:
        """Hand back the text fed but not yet masked (a partial last line, or
        the end of a long one, from a line start or a cut no secret straddles)
        and forget it: the caller stops passing the stream through here."""
        pending, self._pending, self._context = self._pending, "", ""
        self._pem = None
        return pending

    def mask_tail(self, text: str, at: int) -> tuple[int, str]:
        """Mask the end of a stream whose middle was never masked: ``text``
        from about ``at`` on, the text before ``at`` only looked at.  Returns
        where the masked text starts (the next line start, if one is near and
        not the end, else ``at`` or before it, where no secret may straddle
        it) and that text.  The lines before it
        go through this redactor unseen, so a PEM block opened there is still
        dropped; a long line is cut where no match reaches across (as
        :meth:`feed` cuts one), with the text before the cut as context."""
        newline = text.find("\n", at, at + self._window)
        if newline != -1 and newline + 1 < len(text):
            start = newline + 1
            self.feed(text[text.find("\n") + 1 : start])  # unseen: sets the PEM state
        else:
            start = self._safe_cut(text, at)
            self._context = text[max(0, start - _CONTEXT) : start]
            self._pem = None
        return start, self.feed(text[start:]) + self.close()

    def _safe_cut(self, text: str, at: int) -> int:
        """``at``, or before it the start of any match (secret or not) that
        reaches across it."""
        reaches: list[tuple[int, int]] = []
        self._spans(text, max(0, at - self._window), min(len(text), at + self._window), reaches)
        cut, moved = at, True
        while moved:
            moved = False
            for match_start, reach in reaches:
                if match_start < cut < reach:
                    cut, moved = match_start, True
        return cut

    def close(self) -> str:
        """The masked rest: a last line without newline."""
        text = self._context + self._pending
        start = len(self._context)
        self._pending = self._context = ""
        return self._mask_lines(text, start) if len(text) > start else ""

    # -- whole lines -----------------------------------------------------------

    def _mask_lines(self, text: str, start: int) -> str:
        """Mask ``text[start:]`` (whole lines; ``text[:start]`` is context)."""
        out: list[str] = []
        pos = start
        if self._pem is not None:
            pos = self._skip_pem_body(text, pos)
            if self._pem is None and self._pem_newline_owed and pos == start:
                out.append("\n")  # the block ended without END: its dropped last newline
        while pos < len(text):
            begin = _open_pem(text, pos)
            if begin == -1:
                out.append(self._mask_span(text, pos, len(text)))
                break
            out += (self._mask_span(text, pos, begin), MASK)
            line_start = text.rfind("\n", 0, begin) + 1
            self._pem = text[line_start:begin].rstrip()
            newline = text.find("\n", begin)
            if newline == -1:
                break  # the text ends inside the block
            pos = self._skip_pem_body(text, newline + 1)
        self._pem_newline_owed = self._pem is not None
        return "".join(out)

    def _skip_pem_body(self, text: str, pos: int) -> int:
        """Drop the lines of the open PEM block from ``pos``; returns where the
        text after it starts: the END marker's end, the newline before the
        first line that is no part of a block, or ``len(text)`` (still inside)."""
        prefix = self._pem or ""
        while pos < len(text):
            newline = text.find("\n", pos, pos + 400)
            line_end = newline if newline != -1 else min(len(text), pos + 400)
            line = text[pos:line_end]
            if line.startswith(prefix):
                body = line[len(prefix) :]
                close = _PEM_END.search(body)
                if close:
                    self._pem = None
                    return pos + len(prefix) + close.end()
                if _PEM_BODY.fullmatch(body) and (newline != -1 or line_end == len(text)):
                    pos = line_end + 1
                    continue
            self._pem = None
            return pos - 1 if pos > 0 and text[pos - 1] == "\n" else pos
        return len(text)

    # -- spans -----------------------------------------------------------------

    def _mask_span(self, text: str, start: int, end: int) -> str:
        """Mask ``text[start:end]``; the text around it is only looked at."""
        return _apply(text, start, end, self._spans(text, start, end))

    def _flush_long_line(self) -> str:
        """Mask and return the pending line but its last :data:`_WINDOW`
        characters, cut before any secret that reaches past the cut."""
        self._pem = None  # a line this long is no part of a PEM block
        text = self._context + self._pending
        start = len(self._context)
        reaches: list[tuple[int, int]] = []
        spans = self._spans(text, start, len(text), reaches)
        cut = len(text) - self._window
        for match_start, reach in reaches:
            if match_start < cut < reach:
                cut = match_start
        out = _apply(text, start, cut, [span for span in spans if span[1] <= cut])
        self._context = text[max(0, cut - _CONTEXT) : cut]
        self._pending = text[cut:]
        return out

    def _spans(
        self, text: str, start: int, end: int, reaches: list[tuple[int, int]] | None = None
    ) -> list[Span]:
        """The secrets in ``text[start:end]``, sorted, overlaps merged;
        ``reaches`` gets where each match starts and how far it (or its span)
        reaches, secret or not."""
        found: list[Span] = []
        for value in self._env:
            at = text.find(value, start, end)
            while at != -1:
                found.append((at, at + len(value), MASK))
                at = text.find(value, at + len(value), end)
        if reaches is not None:
            reaches += ((span[0], span[1]) for span in found)
        prefilter = _prefilter_for(end - start, self._stream)
        lower = None
        # the prefilter also reads the context: a shape found at ``start`` may
        # need the text before it (``api_`` before ``key=``) to match its set regex
        look = max(0, start - _CONTEXT)
        if (
            prefilter is not None
            and end - start > _BLOCK
            and not prefilter.Match(_utf8(text[look:end]))
        ):
            return _merged(found)  # one pass says no shape can match anywhere in it
        for block_start, block_end in _blocks(text, start, end):
            candidates = (
                range(len(_SHAPES))
                if prefilter is None
                else prefilter.Match(
                    _utf8(text[look if block_start == start else block_start : block_end])
                )
                or ()
            )
            for index in candidates:
                shape = _SHAPES[index][0]
                haystack = text
                if shape.lower:
                    lower = lower if lower is not None else _lower(text)
                    haystack = lower
                for match in shape.pattern.finditer(haystack, block_start, block_end):
                    span = shape.span(match, text, end)
                    if span is not None:
                        found.append(span)
                    if reaches is not None:
                        reaches.append((match.start(), max(match.end(), span[1] if span else 0)))
        return _merged(found)


#: Bytes of whole lines above which :func:`_may_match` scans in two halves at once.
_SPLIT_BYTES = 512 * 1024
_helper = None


def _may_match(lines: bytes) -> bool:
    """Whether the prefilter finds a shape in ``lines`` (whole lines, ASCII).
    A big piece is scanned as two halves cut at a newline, the second in a
    helper thread (one for the process, started on first use): RE2 lets go
    of the GIL while it scans, so on two cores the scan of a megabyte takes
    about two thirds of the time (no shape spans lines, so the halves find
    what the whole does)."""
    global _helper
    prefilter = _prefilter()
    if len(lines) < _SPLIT_BYTES:
        return bool(prefilter.Match(lines))
    if _helper is None:
        from concurrent.futures import ThreadPoolExecutor

        _helper = ThreadPoolExecutor(1, thread_name_prefix="stepkit-prefilter")
    view = memoryview(lines)
    mid = lines.find(b"\n", len(lines) // 2) + 1
    second = _helper.submit(prefilter.Match, view[mid:])
    first = prefilter.Match(view[:mid])
    # a failed helper says "may match": the text path then decides
    return bool(first) or second.exception() is not None or bool(second.result())


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8 for RE2, which cannot encode a surrogate: bytes that
    were not UTF-8 (a file name, a tool's output) arrive as surrogates."""
    return text.encode("utf-8", "surrogatepass")


def _merged(found: list[Span]) -> list[Span]:
    """The spans sorted, overlaps merged."""
    if len(found) < 2:
        return found
    found.sort(key=lambda span: (span[0], -span[1]))
    merged = [found[0]]
    for span in found[1:]:
        last = merged[-1]
        if span[0] >= last[1]:
            merged.append(span)
        elif span[1] > last[1]:  # overlaps the end of the last: one mask for both
            merged[-1] = (last[0], span[1], last[2])
    return merged


def _apply(text: str, start: int, end: int, spans: list[Span]) -> str:
    """``text[start:end]`` with each span replaced."""
    if not spans:
        return text if start == 0 and end == len(text) else text[start:end]
    out: list[str] = []
    pos = start
    for span_start, span_end, replacement in spans:
        out += (text[pos:span_start], replacement)
        pos = span_end
    out.append(text[pos:end])
    return "".join(out)


def _blocks(text: str, start: int, end: int):
    """``text[start:end]`` cut into blocks of whole lines of about :data:`_BLOCK` characters."""
    at = start
    while at < end:
        newline = text.find("\n", min(at + _BLOCK, end), end)
        stop = end if newline == -1 else newline + 1
        yield at, stop
        at = stop


def _holds(text: str, needle: str, start: int, end: int) -> bool:
    """``needle in text[start:end]``; its first character is looked for first
    (memchr speed: most texts hold no ``-`` or no ``e`` and never need the search)."""
    return text.find(needle[0], start, end) != -1 and (
        len(needle) == 1 or text.find(needle, start, end) != -1
    )


def _lower(text: str) -> str:
    """``text`` lower-cased, character for character (the positions match)."""
    lower = text.lower()
    return lower if len(lower) == len(text) else text.translate(_ASCII_LOWER)


def _open_pem(text: str, pos: int) -> int:
    """Where a BEGIN marker with no END on its line starts, or -1 (a block on
    one line is masked as one span)."""
    at = text.find("-----BEGIN", pos) if _holds(text, "-", pos, len(text)) else -1
    while at != -1:
        begin = _PEM_BEGIN.match(text, at)
        if begin is not None:
            newline = text.find("\n", begin.end())
            line_end = len(text) if newline == -1 else newline
            if _PEM_END.search(text, begin.end(), min(line_end, begin.end() + 16384)) is None:
                return at
        at = text.find("-----BEGIN", at + 1)
    return -1
