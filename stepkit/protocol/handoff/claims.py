"""Sentences of a handoff that say a gate passed when it did not.

A pass word (passed, green, OK, succeeded, "all N tests", "no failures" …)
is a claim about the gates its clause (else its sentence) names, unless a
negation or a wish comes shortly before it, it counts ("3 passed"), or its
clause also says something failed (:func:`false_pass_claims`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from stepkit.planrepo.sections import strip_list_markers

#: each gate's words, searched in lower-cased text (a literal start is fast)
_GATE_MENTIONS = {
    name: re.compile(core)
    for name, core in (
        ("format", r"format(?:ter|ting|ted)?\b"),
        ("lint", r"lint(?:er|ing)?\b"),
        ("build", r"build\b"),
        ("tests", r"tests?\b|(?:test\s+)?suite\b|specs?\b"),
    )
}
GATE_WORDS = {
    name: re.compile(rf"\b{p.pattern}", re.IGNORECASE) for name, p in _GATE_MENTIONS.items()
}
#: a runner's summary ("57 passed", "12/12 passed") speaks of tests when it names no gate
_PASS_COUNT = re.compile(r"\d[\d,/]*\s+passed\b")
_SENTENCE_FINDERS = {
    **_GATE_MENTIONS,
    "tests": re.compile(rf"{_GATE_MENTIONS['tests'].pattern}|{_PASS_COUNT.pattern}"),
}
#: words and phrases that say a gate passed (searched in lower-cased text)
_CLAIM = re.compile(
    r"pass(?:es|ed|ing)?\b|succe(?:ss|ssful|ssfully|eds?|eded)\b|green\b|ok(?:ay)?\b|clean\b"
    r"|all\s+\d[\d,]*\s+(?:tests?|checks?)\b|(?:no|zero|0)\s+(?:failures?|failed|failing|errors?)\b"
)
#: what makes a pass word no claim when it comes shortly before it in the clause
_NOT_A_CLAIM = frozenset(
    {
        "not",
        "never",
        "no",
        "none",
        "nothing",
        "nor",
        "neither",
        "without",
        "cannot",
        "should",
        "would",
        "will",
        "must",
        "to",
        "make",
        "makes",
        "ensure",
        "until",
        "once",
        "if",
        "unless",
        "when",
        "expect",
        "expected",
        "need",
        "needs",
        "want",
        "can",
        "could",
        "might",
        "may",
        "keep",
    }
)
_FAILURE = re.compile(r"\b(?:fail(?:s|ed|ing|ures?)?|errors?|broken|red)\b", re.IGNORECASE)
_COUNT_BEFORE = re.compile(
    r"(\ball\s+)?\b\d[\d,]*\s+(?:(?:unit\s+)?(?:tests?|checks?)\s+)?$", re.IGNORECASE
)
_CLAUSE_SEP = re.compile(
    r"[,;]|\s(?:but|while|whereas|although|though|so|yet)\s|\s[—–-]\s", re.IGNORECASE
)
_SENTENCE_END = re.compile(r"\n|[.!?](?=[ \t])")
#: a line break inside a paragraph: not before a blank line, a list item or a heading
_PARAGRAPH_LINE_BREAK = re.compile(r"(?<=\S)\n(?=[ \t]*[^\s\-*+#\d>|])")
_STOPS = (". ", "! ", "? ")
#: characters of a sentence looked at on each side of a pass word
_SENTENCE_MAX = 1000


def false_pass_claims(not_passed: Mapping[str, str], prose: str) -> list[str]:
    """Every sentence of ``prose`` that says a gate in ``not_passed`` passed.

    A pass word (passed, green, OK, succeeded, "all N tests", "no failures"
    …) is a claim about the gates its clause names, else the gates its
    sentence names; it is no claim when a negation or a wish (not, never,
    must, should, to …) comes shortly before it in its clause, when it counts
    ("3 passed"), or when its clause also says something failed.  Sentences
    end at a line break or at ``. `` / ``! `` / ``? ``.  Only the sentences
    that name such a gate are read (found by one search per gate), so a long
    handoff costs little beyond those searches."""
    prose = _PARAGRAPH_LINE_BREAK.sub(
        " ", prose
    )  # a sentence that wraps is one sentence (same offsets)
    lower = _lower(prose)
    sentences: dict[int, int] = {}
    for gate in not_passed:
        end = -1
        for match in _SENTENCE_FINDERS[gate].finditer(lower):
            if match.start() >= end and _word_start(lower, match.start()):  # not in the last one
                start, end = _sentence_at(prose, match.start())
                sentences[start] = max(end, sentences.get(start, end))
    problems: list[str] = []
    seen: set[tuple[str, int]] = set()
    for start in sorted(sentences):
        sentence = prose[start : sentences[start]]
        named = [g for g in not_passed if GATE_WORDS[g].search(sentence)]
        for hit in _CLAIM.finditer(lower, start, sentences[start]):
            if not _word_start(lower, hit.start()):
                continue
            clause, offset = _clause_at(sentence, hit.start() - start)
            kind = _is_claim(clause, offset, hit.group(0))
            if kind is None:
                continue
            in_clause = [g for g, words in GATE_WORDS.items() if words.search(clause)]
            about = [g for g in in_clause if g in not_passed] if in_clause else named
            if not about and "tests" in not_passed and _PASS_COUNT.search(_lower(clause)):
                about = ["tests"]
            if kind == "count":  # "57 passed": only a gate that ran no test has no passes to count
                about = [g for g in about if not_passed[g] in ("not_run", "not run")]
            shown = strip_list_markers(sentence.strip())[:200]
            for gate in about:
                if (gate, start) in seen:
                    continue
                seen.add((gate, start))
                status = not_passed[gate]
                did = (
                    "did not run"
                    if status in ("not_run", "not run")
                    else f"did not pass ({status})"
                )
                problems.append(f"the {gate} gate {did} but the handoff says it passed: {shown}")
    return problems


def _lower(text: str) -> str:
    """``text`` lower-cased, position for position (the few characters whose
    lower case is longer stay as they are)."""
    lower = text.lower()
    if len(lower) == len(text):
        return lower
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


def _word_start(text: str, at: int) -> bool:
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")


def _sentence_at(text: str, at: int) -> tuple[int, int]:
    """(start, end) of the sentence around position ``at``, looked for
    within :data:`_SENTENCE_MAX` characters on each side."""
    low, high = max(0, at - _SENTENCE_MAX), min(len(text), at + _SENTENCE_MAX)
    newline = text.rfind("\n", low, at)
    start = newline + 1 if newline != -1 else low
    for mark in _STOPS:
        stop = text.rfind(mark, start, at)
        if stop != -1:
            start = stop + len(mark)
    end = _SENTENCE_END.search(text, at, high)
    return start, end.end() if end else high


def _clause_at(sentence: str, at: int) -> tuple[str, int]:
    """The clause of ``sentence`` holding position ``at``, and ``at`` within it."""
    start, end = 0, len(sentence)
    for sep in _CLAUSE_SEP.finditer(sentence):
        if sep.end() <= at:
            start = sep.end()
        elif sep.start() >= at:
            end = sep.start()
            break
    return sentence[start:end], at - start


def _is_claim(clause: str, offset: int, word: str) -> str | None:
    """``"claim"``, ``"count"`` (a count of passes: "3 passed", a claim only
    about a gate that ran no test) or None."""
    before = clause[:offset]
    if _says_failed(clause, before) or _says_failed(clause, clause[offset + len(word) :]):
        return None
    words = [w.strip(".,;:!?()\"'`*").lower() for w in before.split()[-5:]]
    if any(w in _NOT_A_CLAIM or w.endswith("n't") for w in words):
        return None
    counted = _COUNT_BEFORE.search(before)
    if counted and not counted.group(1) and not word.lower().startswith("all"):
        return "count"
    return "claim"


#: words that, just before a failure word, say there was none ("without any failures")
_NO_FAILURE = frozenset({"without", "no", "zero", "0", "nor", "single"})


def _says_failed(clause: str, part: str) -> bool:
    """``part`` of ``clause`` names a failure that is not negated
    ("1 failed" yes; "without any failures", "with no failed tests" no)."""
    for failure in _FAILURE.finditer(part):
        near = [w.strip(".,;:!?()\"'`*").lower() for w in part[: failure.start()].split()[-3:]]
        if not any(w in _NO_FAILURE for w in near):
            return True
    return False
