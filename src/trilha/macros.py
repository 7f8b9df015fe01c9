"""The macro language of offer URLs: ``{name}`` placeholders filled in one pass.

A value lands URL-encoded for the part of the URL it lands in (path, query or fragment), a value
that itself contains ``{x}`` is never expanded again, and an unknown macro stays exactly as
written so that a typo shows in the final URL instead of silently vanishing, and a macro in the
scheme or host is never filled, so no visitor chooses where a URL leads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote

from trilha.dimensions import CLICK_IDS, SUBS, UTMS

TEMPLATE_CACHE_SIZE = 1024
MACRO = re.compile(r"\{([A-Za-z][A-Za-z0-9_.\-]*)\}")
# A URL's scheme and authority (userinfo, host, port), split as RFC 3986's appendix B does.
_ORIGIN = re.compile(r"(?:[^:/?#]+:)?(?://[^/?#]*)?")

# Characters RFC 3986 lets stand unencoded in each part, less the ones that would change the
# meaning of what follows: "/" in a path segment value, "&", "=" and "+" in a query value.
SAFE_IN_PATH = "-._~!$&'()*+,;=:@"
SAFE_IN_QUERY = "-._~!$'()*,;:@/?"
SAFE_IN_FRAGMENT = "-._~!$&'()*+,;=:@/?"

# Built-in macros and what each holds, in the order docs/macros.md lists them.
BUILTIN_MACROS: dict[str, str] = {
    "click_id": "The click's unique id (23 characters, [0-9A-Za-z]).",
    "campaign_id": "The campaign's id in trilha.",
    "campaign_name": "The campaign's name.",
    "campaign_slug": "The slug of the tracking link.",
    "source": "The traffic source's name.",
    "source_id": "The traffic source's id in trilha.",
    "creative": "Creative (ad creative id or name) sent by the source.",
    "ad_id": "Ad id sent by the source.",
    "ad_name": "Ad name sent by the source.",
    "adset_id": "Ad set (ad group) id sent by the source.",
    "adset_name": "Ad set (ad group) name sent by the source.",
    "placement": "Placement sent by the source.",
    "site_id": "Site or zone id sent by the source.",
    "keyword": "Keyword sent by the source.",
    "device": "Device type: desktop, mobile, tablet or bot.",
    "os": "Operating system family, e.g. Android, iOS, Windows.",
    "browser": "Browser family, e.g. Chrome Mobile, Safari.",
    "country": "Two-letter country code of the visitor's IP, or empty.",
    "ip": "The visitor's IP address.",
    "user_agent": "The visitor's User-Agent header.",
    "referrer": "The Referer header of the click, or empty.",
    "timestamp": "Unix time of the click, in seconds.",
    "date": "Date of the click in the workspace's time zone, YYYY-MM-DD.",
    "random": "A random number from 0 to 999999999, new for every click.",
    **{name: f"{name} sent by the source." for name in SUBS},
    **{name: f"The {name} query parameter." for name in UTMS},
    **{name: f"The {name} click identifier of the ad network." for name in CLICK_IDS},
}


@dataclass(frozen=True, slots=True)
class Template:
    """A template split once into literal text and macros, each macro with the characters left
    unencoded in the part of the URL it stands in."""

    literals: tuple[str, ...]  # one more than macros: the text around them
    macros: tuple[tuple[str, str, str], ...]  # (name, safe characters, the macro as written)
    names: frozenset[str]  # the macros' names

    def fill(self, values: Mapping[str, str]) -> str:
        out = [self.literals[0]]
        for (name, safe, written), literal in zip(self.macros, self.literals[1:], strict=True):
            value = values.get(name)
            out.append(written if value is None else url_value(value, safe))
            out.append(literal)
        return "".join(out)


def url_value(value: str, safe: str) -> str:
    """A macro's value as it lands in the URL: percent-encoded but for the ``safe`` characters.

    >>> url_value("a b/c", SAFE_IN_QUERY), url_value("IwAR0x", SAFE_IN_QUERY)
    ('a%20b/c', 'IwAR0x')
    """
    if value.isascii() and value.isalnum():  # ids, most sub-ids: nothing to encode
        return value
    return quote(value, safe=safe)


@lru_cache(maxsize=TEMPLATE_CACHE_SIZE)
def compile_template(template: str) -> Template:
    """Split a template; cached, since every click of a campaign fills the same one. Macros in
    the scheme or authority stay literal text, so no value can choose where the URL leads.

    >>> compile_template("https://x.test/{p}?a={a}").macros
    (('p', "-._~!$&'()*+,;=:@", '{p}'), ('a', "-._~!$'()*,;:@/?", '{a}'))
    >>> compile_template("https://{host}/{p}").fill({"host": "evil.test", "p": "1"})
    'https://{host}/1'
    """
    origin_at = origin_end(template)
    query_at = _index_or_end(template, "?")
    fragment_at = _index_or_end(template, "#")
    literals: list[str] = []
    macros: list[tuple[str, str, str]] = []
    end = 0
    for match in MACRO.finditer(template, origin_at):
        literals.append(template[end : match.start()])
        if match.start() > fragment_at:
            safe = SAFE_IN_FRAGMENT
        elif match.start() > query_at:
            safe = SAFE_IN_QUERY
        else:
            safe = SAFE_IN_PATH
        macros.append((match.group(1), safe, match.group(0)))
        end = match.end()
    literals.append(template[end:])
    return Template(tuple(literals), tuple(macros), frozenset(name for name, _, _ in macros))


def origin_end(template: str) -> int:
    """Where a URL's scheme and authority end. A macro before that would choose where the URL
    leads: it is refused when a URL is saved, and one stored before is never filled.

    >>> origin_end("https://{sub1}.example:8443/x?a={a}")
    27
    """
    match = _ORIGIN.match(template)  # the pattern matches every text, at least emptily
    return match.end() if match else 0


def holds_origin_macro(template: str) -> bool:
    """Whether a macro stands in the URL's scheme, userinfo, host or port.

    >>> holds_origin_macro("https://offer.example{sub1}/x")
    True
    >>> holds_origin_macro("https://offer.example/{sub1}")
    False
    """
    return MACRO.search(template, 0, origin_end(template)) is not None


def fill_macros(template: str, values: Mapping[str, str]) -> str:
    """Replace {name} placeholders in one pass; unknown names stay as they are.

    >>> fill_macros("https://x.test/?cid={click_id}&t={typo}", {"click_id": "a b&c"})
    'https://x.test/?cid=a%20b%26c&t={typo}'
    """
    return compile_template(template).fill(values)


def unknown_macros(template: str, values: Mapping[str, str]) -> tuple[str, ...]:
    """Names in ``template`` that neither a built-in macro nor ``values`` provides."""
    names = dict.fromkeys(m.group(1) for m in MACRO.finditer(template))
    return tuple(n for n in names if n not in BUILTIN_MACROS and n not in values)


def _index_or_end(text: str, char: str) -> int:
    index = text.find(char)
    return len(text) if index < 0 else index
