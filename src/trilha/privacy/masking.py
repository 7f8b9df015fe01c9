"""Masking buyers' personal data in stored text (pure): by field, the values a platform sends
where it puts the buyer; by pattern, e-mails, CPFs, CNPJs and phone numbers anywhere.

The values found by field are masked with the log's secret masker (every spelling: JSON-escaped,
percent-encoded); the patterns catch what no field list names.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from typing import Any, Final

from trilha.postbacks.payload import Tree, get_path, path_index
from trilha.privacy.buyer_fields import BuyerFields

MASK: Final = "********"
# Shorter values ("SP", an address number) would hide every equal value of the payload, its
# status codes among them, and say little about the buyer.
SHORTEST_MASKED = 4
SHORTEST_NUMBER = 8
MOST_VALUES = 200

# What may not stand right before a masked value (it would be part of a longer word or number).
_NOT_BEFORE: Final = frozenset("@.%+-_") | frozenset(string.ascii_letters + string.digits)
_AFTER: Final = r"(?![\w@])"
_AT: Final = re.compile(r"@|%40")
# An e-mail's local part, read backwards from its "@" (64 characters at most). Not "=", "&",
# "?", "/" or quotes, though e-mails may have them: they end a query's or a JSON's value, and
# the e-mail would take its field's name with it.
_LOCAL_PART: Final = re.compile(r"[A-Za-z0-9!#$*+^_`{|}~.\-]{1,64}\Z")
_DOMAIN: Final = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.){1,16}[A-Za-z0-9\-]{2,63}"
)
# Runs of digits and the punctuation of documents and phones (percent-encoded too), found in one
# quick pass (a pattern that starts with a character class lets the engine skip ahead); only
# these are read with the exact pattern below, which tried at every position of a body cost
# more than the rest of the postback.
_CANDIDATE: Final = re.compile(r"[\d+(%][\d\s().+/\\\-%BbFf]{8,24}(?![\w@])")
_BEFORE: Final = r"(?<![\w@.%+\-])"
# Punctuated CPFs and CNPJs, phones, and bare 11- or 14-digit numbers (the "bare" group, masked
# only when their check digits hold).
DOCUMENT_OR_PHONE: Final = re.compile(
    _BEFORE
    + r"(?:\d{3}\.\d{3}\.\d{3}-\d{2}|\d{2}\.\d{3}\.\d{3}(?:/|%2F|%2f|\\/)\d{4}-\d{2}"
    + r"|(?:\+|%2B|%2b)\d{12,13}"
    + r"|(?:(?:\+|%2B|%2b)?55[\s+]?)?\(?\d{2}\)?[\s+\-]?9?\d{4}[\s+\-.]\d{4}"
    + r"|(?P<bare>\d{11}|\d{14}))"
    + _AFTER
)


def mask_patterns(text: str) -> str:
    """E-mails, CPFs and CNPJs (with or without punctuation; bare digits only when their check
    digits hold), and punctuated phone numbers, masked.

    >>> mask_patterns("email=ana%40example.com&cpf=529.982.247-25&tel=(11) 98765-4321&id=12")
    'email=********&cpf=********&tel=********&id=12'
    >>> mask_patterns('{"doc": "52998224725", "order": "12345678901"}')
    '{"doc": "********", "order": "12345678901"}'
    """
    # The quick checks spare most texts (a query string, a header) the slower patterns.
    if "@" in text or "%40" in text:
        text = _mask_emails(text)
    return _CANDIDATE.sub(lambda candidate: _mask_numbers(candidate, text), text)


def _mask_emails(text: str) -> str:
    """Each "@" looked at once, its local part read backwards: a pattern scanning for e-mails
    from every position cost a third of a postback."""
    kept: list[str] = []
    done = 0
    for at in _AT.finditer(text):
        if at.start() < done:
            continue
        local = _LOCAL_PART.search(text, max(done, at.start() - 64), at.start())
        domain = _DOMAIN.match(text, at.end())
        if local is None or domain is None:
            continue
        kept += [text[done : local.start()], MASK]
        done = domain.end()
    return "".join([*kept, text[done:]])


def _mask_numbers(candidate: re.Match[str], text: str) -> str:
    start = candidate.start()
    if start > 0 and text[start - 1] in _NOT_BEFORE:  # part of a longer word or number
        return candidate.group()
    return DOCUMENT_OR_PHONE.sub(_masked, candidate.group())


def _masked(match: re.Match[str]) -> str:
    bare = match.group("bare")
    return match.group() if bare is not None and not is_valid_document(bare) else MASK


def is_valid_document(digits: str) -> bool:
    """Whether 11 digits are a CPF, or 14 a CNPJ, by their check digits.

    >>> is_valid_document("52998224725"), is_valid_document("11144477735"), is_valid_document("1")
    (True, True, False)
    """
    if not digits.isascii() or not digits.isdigit() or len(set(digits)) == 1:
        return False
    if len(digits) == 11:
        weights = [list(range(10, 1, -1)), list(range(11, 1, -1))]
    elif len(digits) == 14:
        weights = [[5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]]
    else:
        return False
    numbers = [int(d) for d in digits]
    for position, weight in enumerate(weights, start=len(digits) - 2):
        total = sum(n * w for n, w in zip(numbers, weight, strict=False))
        check = 0 if total % 11 < 2 else 11 - total % 11
        if numbers[position] != check:
            return False
    return True


def buyer_values(payload: Tree, fields: BuyerFields) -> list[str]:
    """The text of every value at the buyer's fields, longest first.

    >>> from trilha.privacy.buyer_fields import BuyerFields
    >>> buyer_values({"client_name": "Ana Souza", "client_uf": "SP", "trans_key": "T1"},
    ...              BuyerFields(masked=("client_*",)))
    ['Ana Souza']
    """
    found: set[str] = set()
    for path in path_index(fields.masked).present(payload):
        for value in _at(payload, path):
            found.update(_leaves(value))
            if len(found) > MOST_VALUES:
                break
    return sorted((v for v in found if _is_worth_masking(v)), key=len, reverse=True)


def _is_worth_masking(value: str) -> bool:
    """Long enough to say something of the buyer; a short number (a house number, "1200")
    would also hide that number inside amounts and ids, where it is no one's."""
    return len(value) >= SHORTEST_NUMBER if value.isdigit() else len(value) >= SHORTEST_MASKED


def _at(payload: Tree, path: str) -> Iterator[Any]:
    if not path.endswith("*"):
        value = get_path(payload, path)
        if value is not None:
            yield value
        return
    parent_path, _, prefix = path[:-1].rpartition(".")
    parent = get_path(payload, parent_path) if parent_path else payload
    if isinstance(parent, dict):
        yield from (v for k, v in parent.items() if isinstance(k, str) and k.startswith(prefix))


def _leaves(value: Any, depth: int = 0) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, depth + 1)
    elif isinstance(value, str):
        yield value.strip()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
