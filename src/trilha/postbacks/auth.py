"""Does the postback prove it comes from the merchant: a shared secret or an HMAC signature."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from trilha.merchants import Merchant
from trilha.postbacks.mapping import read_field
from trilha.postbacks.payload import Tree
from trilha.postbacks.preset import AuthKind


def check_secret(
    merchant: Merchant,
    *,
    payload: Tree,
    headers: Mapping[str, str],
    query: Mapping[str, str],
    body: bytes,
) -> str | None:
    """None when the request is authentic (or the merchant has no secret); else the reason."""
    secret = merchant.secret
    if not secret:
        return None
    kind = merchant.preset.auth
    if kind is AuthKind.HMAC_SHA1_QUERY:
        sent = query.get(merchant.preset.auth_param, "")
        expected = hmac.new(secret.encode(), body, hashlib.sha1).hexdigest()
        return None if _equal(sent.lower(), expected) else "the signature does not match the body"
    if kind is AuthKind.HMAC_SHA256_HEADER:
        sent = headers.get(merchant.preset.auth_param, "").removeprefix("sha256=")
        expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        return None if _equal(sent.lower(), expected) else "the signature does not match the body"
    sent_secret = _header_secret(merchant, headers) or read_field(merchant, payload, "secret")
    if sent_secret is None:
        return "the merchant's secret is missing from the request"
    return None if _equal(sent_secret, secret) else "the merchant's secret does not match"


def _header_secret(merchant: Merchant, headers: Mapping[str, str]) -> str | None:
    for path in merchant.paths("secret"):
        value = headers.get(path.lower())
        if value:
            return value
    return None


def _equal(sent: str, expected: str) -> bool:
    return hmac.compare_digest(sent.encode(), expected.encode())
