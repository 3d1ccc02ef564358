"""What ``relimpute judge`` shows and reads: printable text, the prompt's answers, --docs."""

from __future__ import annotations

import re
import sys

from ..errors import InputError

#: C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and
#: isolates: a document's text shown as such could move the cursor, recolour or retitle the
#: terminal, or reorder what the assessor reads
_UNSAFE_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: in an id, tab and newline too (an id is one field)
_UNSAFE_ID = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

ANSWERS_FORMAT = (
    "one answer a line, as typed at the prompt (a grade, r/n on binary qrels, s, u or q), "
    "optionally after the topic and document it answers ('QUERY_ID DOC_ID ANSWER', checked "
    "against the document shown)"
)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters written as ``\\xNN`` (tab and newline kept)."""
    return _UNSAFE_TEXT.sub(_escape, text)


def printable_id(text: str) -> str:
    """A topic, document or run id with every control character written as ``\\xNN``."""
    return _UNSAFE_ID.sub(_escape, str(text))


def check_terminal(answers: str | None) -> None:
    """Refuse a standard input that is not a terminal unless ``--answers`` says how to read it."""
    if answers is None and not sys.stdin.isatty():
        raise InputError(
            "standard input is not a terminal: answer at a terminal, or pipe the answers in "
            "with --answers - (one a line, as typed at the prompt; judge --help says more)"
        )


class Answers:
    """The answers of ``--answers FILE`` (``-``: standard input), a line at a time."""

    def __init__(self, path: str):
        self.source = "--answers -" if path == "-" else path
        if path == "-":
            self._lines = iter(sys.stdin.readline, "")
        else:
            from .._files import read_input

            data = read_input(path, "--answers file")
            try:
                self._lines = iter(data.decode("utf-8").splitlines(keepends=True))
            except UnicodeDecodeError as exc:
                line = data[: exc.start].count(b"\n") + 1
                raise InputError("--answers file is not UTF-8 text", path, line) from None
        self.line = 0

    def next(self) -> list[str] | None:
        """The next non-blank line's fields (None at the end)."""
        for text in self._lines:
            self.line += 1
            fields = text.split()
            if fields:
                return fields
        return None

    def error(self, problem: str) -> InputError:
        return InputError(problem, self.source, self.line)


def ask(out, keys: dict, prompt: str, hint: str, answers: Answers | None, shown: tuple[str, str]):
    """The key the assessor answers for the document ``shown`` (``"quit"`` at the end of input).

    At a terminal a wrong key asks again; from ``--answers`` it is an error naming the line
    (every answer before it is already in the journal).
    """
    while True:
        out.write(prompt)
        out.flush()
        if answers is None:
            line = sys.stdin.readline()
            if line == "":  # end of input: quit, everything is already saved
                out.write("\n")
                return "quit"
            key = line.strip().lower()
            if key in keys:
                return keys[key]
            print(f"{printable_id(key)!r} is not a key: {hint}", file=out)
            continue
        fields = answers.next()
        if fields is None:
            out.write("\n")
            return "quit"
        print(printable_id(" ".join(fields)), file=out)  # the transcript reads as typed
        if len(fields) == 3 and tuple(fields[:2]) != shown:
            raise answers.error(
                f"this answer is for document {fields[1]!r} of topic {fields[0]!r}, but judge "
                f"shows document {shown[1]!r} of topic {shown[0]!r}; the answers before it are "
                "saved in the journal"
            )
        if len(fields) not in (1, 3) or fields[-1].lower() not in keys:
            given = " ".join(fields)
            raise answers.error(f"{given!r} is not an answer: {hint}; expected " + ANSWERS_FORMAT)
        return keys[fields[-1].lower()]


def load_texts(path: str) -> dict[str, str]:
    """``doc_id -> text`` from TSV (``doc_id<TAB>text``) or JSONL (``doc_id``, ``text``)."""
    import json

    from .._files import read_input

    data = read_input(path, "--docs file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError("--docs file is not UTF-8 text", path, line) from None
    texts = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                record = json.loads(line)
                texts[str(record["doc_id"])] = str(record["text"])
            except (json.JSONDecodeError, KeyError, TypeError):
                raise InputError(
                    "expected a JSON object with doc_id and text", path, number
                ) from None
        else:
            doc_id, sep, body = line.rstrip("\r").partition("\t")
            if not sep:
                raise InputError("expected 'doc_id<TAB>text'", path, number)
            texts[doc_id] = body
    return texts


def show_and_ask(out, texts, docs, keys, prompt, hint, answers, shown: tuple[str, str]):
    """Print the text of the document ``shown`` (when ``--docs`` gave ``texts``), then
    :func:`ask` for the assessor's key."""
    if texts is not None:
        doc_id = shown[1]
        print(printable(texts[doc_id]) if doc_id in texts else f"(no text in {docs})", file=out)
    return ask(out, keys, prompt, hint, answers, shown)


def record(key, journal, session, shown: tuple[str, str]) -> bool:
    """Write a grade or a skip to the journal, then apply it to ``session`` (False: the key
    is neither)."""
    if isinstance(key, int):
        journal.judge(*shown, key)
        session.judge(*shown, key)
    elif key == "skip":
        journal.skip(*shown)
        session.skip(*shown)
    else:
        return False
    return True


CONTROL_KEYS = {"s": "skip", "u": "undo", "q": "quit"}
BINARY_KEYS = {"r": 1, "1": 1, "n": 0, "0": 0}


def answer_keys(scale: tuple[int, int], rel_threshold: int) -> tuple[dict, str, str]:
    """Keys, prompt and the reminder shown after a wrong key, for the collection's scale.

    Binary qrels take r/1 and n/0; graded qrels take the grade itself, as
    TREC assessors give it, so the journal holds what the assessor said.
    """
    low, high = scale
    control = "[s] skip  [u] undo  [q] quit > "
    if high <= 1:
        return (
            {**BINARY_KEYS, **CONTROL_KEYS},
            "relevant? [r/1] yes  [n/0] no  " + control,
            "answer r, n, s, u or q",
        )
    grades = {str(g): g for g in range(low, high + 1)}
    return (
        {**grades, **CONTROL_KEYS},
        f"grade? [{low}-{high}] (relevant from {rel_threshold})  " + control,
        f"answer a grade {low}-{high} (these qrels are graded), s, u or q",
    )
