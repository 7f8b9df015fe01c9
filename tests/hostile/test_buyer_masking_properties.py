"""Properties of buyer-data masking and hashing: e-mails, CPFs and CNPJs never survive masking
wherever they sit in a text and however they are written, a bare number whose check digits fail
and text without buyer data are left as they were, masking is idempotent, and hashes do not
depend on how the e-mail or phone was written."""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from trilha.privacy.hashes import normalise_email, normalise_phone, sha256_hex
from trilha.privacy.masking import MASK, is_valid_document, mask_patterns

WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)
EMAIL = st.builds(
    lambda local, domain, tld: f"{local}@{domain}.{tld}",
    st.from_regex(r"[a-z0-9][a-z0-9._+\-]{0,20}", fullmatch=True),
    st.from_regex(r"[a-z0-9]([a-z0-9\-]{0,10}[a-z0-9])?", fullmatch=True),
    st.sampled_from(["com", "com.br", "net", "org.br", "io"]),
)
# Text around the value: words and the separators of queries, forms and JSON, never digits
# or "@" (which could make the text around it part of the value).
SEPARATOR = st.sampled_from([" ", "=", "&", '"', ": ", ", ", "\n", "{", "}", "[", "]"])
AROUND = st.lists(WORD | SEPARATOR, max_size=8).map("".join)


def with_check_digits(base: list[int]) -> str:
    """Digits completed with their CPF (9 given) or CNPJ (12 given) check digits."""
    digits = list(base)
    while len(digits) in (9, 10, 12, 13):
        if len(base) == 9:
            weights = list(range(len(digits) + 1, 1, -1))
        else:
            weights = (
                [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
                if len(digits) == 12
                else [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
            )
        total = sum(d * w for d, w in zip(digits, weights, strict=True))
        digits.append(0 if total % 11 < 2 else 11 - total % 11)
    return "".join(map(str, digits))


def varied(base: list[int]) -> list[int]:
    """000.000.000-00 and the like hold their check digits but are no one's: one digit changed
    makes them someone's."""
    return base if len(set(base)) > 1 else [*base[:-1], (base[-1] + 1) % 10]


CPF = st.lists(st.integers(0, 9), min_size=9, max_size=9).map(varied).map(with_check_digits)
CNPJ = st.lists(st.integers(0, 9), min_size=12, max_size=12).map(varied).map(with_check_digits)
DOCUMENT = CPF | CNPJ


def spellings(digits: str) -> list[tuple[str, str]]:
    """A document as it is written where masking finds it, each with its name: bare, punctuated,
    and a CNPJ's slash as a query string (%2F) or a JSON string (\\/) escapes it."""
    if len(digits) == 11:
        punctuated = f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}"
        return [("CPF, bare", digits), ("CPF, punctuated", punctuated)]
    return [("CNPJ, bare", digits)] + [
        (
            f"CNPJ, punctuated with {slash}",
            f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}{slash}{digits[8:12]}-{digits[12:]}",
        )
        for slash in ("/", "%2F", "\\/")
    ]


def a_digit_off(digits: str, position: int, shift: int) -> str:
    position %= len(digits)
    return f"{digits[:position]}{(int(digits[position]) + shift) % 10}{digits[position + 1 :]}"


CHECK_DIGIT = st.sampled_from([-1, -2])
# A document with one digit written wrong, often a check digit: a check then fails, or (a digit
# of the base, where the weights allow it) both still hold.
NEAR_DOCUMENT = st.builds(
    a_digit_off, DOCUMENT, CHECK_DIGIT | st.integers(0, 13), st.integers(1, 9)
)
WRITTEN_DOCUMENT = DOCUMENT.flatmap(lambda digits: st.sampled_from(spellings(digits)))
# What stands right before and after a value in a query, a form, a JSON or a log line: never a
# letter or a digit, which would make the value part of a longer word or number.
OPENING = st.sampled_from([" ", "=", '"', ": ", "\n", "{", "[", ", "])
CLOSING = st.sampled_from([" ", "&", '"', ",", "\n", "}", "]"])


@given(AROUND, EMAIL, AROUND)
def test_no_e_mail_survives_masking(before: str, email: str, after: str) -> None:
    masked = mask_patterns(f"{before} {email} {after}")
    assert email not in masked
    assert email.replace("@", "%40") not in mask_patterns(f"{before}={email.replace('@', '%40')}&")


@given(AROUND, OPENING, WRITTEN_DOCUMENT, CLOSING, AROUND)
def test_no_cpf_or_cnpj_survives_masking(
    before: str, opening: str, written: tuple[str, str], closing: str, after: str
) -> None:
    spelling, document = written
    event(spelling)

    masked = mask_patterns(f"{before}{opening}{document}{closing}{after}")

    assert masked == f"{before}{opening}{MASK}{closing}{after}"


@given(AROUND, OPENING, DOCUMENT, CHECK_DIGIT, st.integers(1, 9), CLOSING, AROUND)
def test_a_bare_number_whose_check_digits_fail_is_left_as_it_was(
    before: str,
    opening: str,
    digits: str,
    check_digit: int,
    shift: int,
    closing: str,
    after: str,
) -> None:
    """An order id or a phone's digits are not a buyer's document: one check digit off, and the
    number stays as it was written."""
    text = f"{before}{opening}{a_digit_off(digits, check_digit, shift)}{closing}{after}"

    assert mask_patterns(text) == text


@given(st.text(st.characters(blacklist_characters="@%0123456789"), max_size=200))
def test_text_without_buyer_data_is_left_as_it_was(text: str) -> None:
    assert mask_patterns(text) == text


@given(st.text(max_size=300))
def test_masking_is_idempotent_and_never_fails(text: str) -> None:
    once = mask_patterns(text)
    assert mask_patterns(once) == once


def holds_check_digits(text: str) -> bool:
    return (
        len(text) in (11, 14)
        and text.isascii()
        and text.isdigit()
        and len(set(text)) > 1
        and with_check_digits([int(d) for d in text[:-2]]) == text
    )


@given(
    DOCUMENT | NEAR_DOCUMENT | st.text("0123456789", min_size=9, max_size=15) | st.text(max_size=20)
)
def test_a_number_is_a_document_exactly_when_its_check_digits_hold(text: str) -> None:
    is_document = holds_check_digits(text)
    event("a document" if is_document else "no document")

    assert is_valid_document(text) == is_document


@given(EMAIL, st.sampled_from(["", " ", "\t", "  "]), st.booleans())
def test_an_e_mail_hashes_the_same_however_it_was_written(
    email: str, space: str, shout: bool
) -> None:
    written = f"{space}{email.upper() if shout else email}{space}"
    normalised = normalise_email(written)
    assert normalised == email
    assert sha256_hex(str(normalised)) == sha256_hex(email)


@given(
    st.integers(11, 99),
    st.from_regex(r"9[0-9]{8}", fullmatch=True),
    st.sampled_from(
        [
            "({ddd}) {a}-{b}",
            "{ddd} {a}{b}",
            "+55 {ddd} {a}-{b}",
            "55{ddd}{a}{b}",
            "0{ddd} {a} {b}",
            "+55 ({ddd}) {a}.{b}",
        ]
    ),
)
def test_a_brazilian_phone_hashes_the_same_however_it_was_written(
    ddd: int, number: str, shape: str
) -> None:
    written = shape.format(ddd=ddd, a=number[:5], b=number[5:])
    assert normalise_phone(written) == f"55{ddd}{number}"
