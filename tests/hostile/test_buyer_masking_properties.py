"""Properties of buyer-data masking and hashing: e-mails, CPFs and CNPJs never survive masking
wherever they sit in a text, text without them is left as it was, masking is idempotent, and
hashes do not depend on how the e-mail or phone was written."""

from __future__ import annotations

from hypothesis import given
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


CPF = st.lists(st.integers(0, 9), min_size=9, max_size=9).map(with_check_digits)
CNPJ = st.lists(st.integers(0, 9), min_size=12, max_size=12).map(with_check_digits)


def punctuated(digits: str) -> str:
    if len(digits) == 11:
        return f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}"
    return f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}/{digits[8:12]}-{digits[12:]}"


@given(AROUND, EMAIL, AROUND)
def test_no_e_mail_survives_masking(before: str, email: str, after: str) -> None:
    masked = mask_patterns(f"{before} {email} {after}")
    assert email not in masked
    assert email.replace("@", "%40") not in mask_patterns(f"{before}={email.replace('@', '%40')}&")


@given(AROUND, CPF | CNPJ, st.booleans(), AROUND)
def test_no_cpf_or_cnpj_survives_masking(
    before: str, digits: str, is_punctuated: bool, after: str
) -> None:
    document = punctuated(digits) if is_punctuated else digits
    if len(set(digits)) == 1:  # 000.000.000-00 and the like are no one's
        return
    masked = mask_patterns(f"{before} {document} {after}")
    assert document not in masked
    assert MASK in masked


@given(st.text(st.characters(blacklist_characters="@%0123456789"), max_size=200))
def test_text_without_buyer_data_is_left_as_it_was(text: str) -> None:
    assert mask_patterns(text) == text


@given(st.text(max_size=300))
def test_masking_is_idempotent_and_never_fails(text: str) -> None:
    once = mask_patterns(text)
    assert mask_patterns(once) == once


@given(st.text(max_size=20))
def test_only_documents_with_their_check_digits_are_documents(digits: str) -> None:
    if is_valid_document(digits):
        assert len(digits) in (11, 14)
        assert with_check_digits([int(d) for d in digits[: len(digits) - 2]]) == digits


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
