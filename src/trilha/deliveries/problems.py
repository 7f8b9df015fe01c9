"""Why a delivery or a destination did not go through: each kind of problem written once, as
trilha stores it (English, the detail kept whole for the log), and read back by kind, so the
dashboard says it in the reader's language with the detail after it.

>>> CONNECT_FAILED.say(detail="All connection attempts failed")
'ConnectError: All connection attempts failed'
>>> read_problem("10 rejections in a row; the last: HTTP 404")
('rejections', {'count': '10', 'last': 'HTTP 404'})
>>> read_problem("something else") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from trilha.i18n import Translator

# Parts of a problem that are themselves a problem: read, and said, in turn.
NESTED = frozenset({"detail", "last"})


@dataclass(frozen=True, slots=True)
class Problem:
    """A kind of problem: ``key`` names its text in the catalogs (``problem.<key>``),
    ``template`` is how it is stored, ``{name}`` standing for a part."""

    key: str
    template: str
    parts: dict[str, str] = field(default_factory=dict)  # a part's pattern, when not ".+"
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pieces = re.split(r"\{([a-z_]+)\}", self.template)
        regex = "".join(
            re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>{self.parts.get(piece, '.+')})"
            for i, piece in enumerate(pieces)
        )
        object.__setattr__(self, "pattern", re.compile(regex, re.DOTALL))

    def say(self, **parts: object) -> str:
        """The problem as stored."""
        return self.template.format(**parts)


ADDRESS_CHECK = Problem("address_check", "address check failed: {detail}")
NOT_PUBLIC = Problem("not_public", "{host} resolves to {address}, which is not a public address")
NO_ANSWER_FROM_DNS = Problem("does_not_resolve_because", "{host} does not resolve: {detail}")
DOES_NOT_RESOLVE = Problem("does_not_resolve", "{host} does not resolve")
TIMED_OUT = Problem("timed_out", "timed out")
CONNECT_FAILED = Problem("connect_failed", "ConnectError: {detail}")
NETWORK = Problem("network", "{error}: {detail}", {"error": r"[A-Z]\w*(?:Error|Exception|Timeout)"})
NETWORK_BARE = Problem("network_bare", "{error}", {"error": r"[A-Z]\w*(?:Error|Exception)"})
REDIRECT = Problem("redirect", "redirect to {location}, not followed")
HTTP_STATUS = Problem("http_status", "HTTP {code}", {"code": r"\d{3}"})
HTTP_STATUS_WITH = Problem("http_status_with", "HTTP {code}: {detail}", {"code": r"\d{3}"})
REJECTIONS = Problem(
    "rejections", "{count} rejections in a row; the last: {last}", {"count": r"\d+"}
)
FAILING = Problem("failing", "only timeouts and server errors since {since} UTC")
SWITCHED_OFF_BY_USER = Problem("switched_off_by_user", "switched off by a user")
SWITCHED_OFF = Problem("switched_off", "Destination {name} was switched off: {detail}")
NOT_TOLD = Problem(
    "not_told", "{platform} is not told of {status} conversions", {"status": r"[a-z_]+"}
)
TOO_OLD_FOR_META = Problem("too_old_for_meta", "older than 7 days: Meta refuses such events")
TOO_OLD = Problem("too_old", "older than 7 days")
NO_GOOGLE_CLICK = Problem("no_google_click", "the click has no gclid, gbraid or wbraid")
TIKTOK_REFUSED = Problem("tiktok_refused", "TikTok refused it: {detail}")
OAUTH_FAILED = Problem("oauth_failed", "OAuth refresh failed: {detail}")
NO_ACCESS_TOKEN = Problem("no_access_token", "no access_token in the answer")

# The first whose pattern matches the whole text is the one: specific kinds before general.
PROBLEMS = (
    ADDRESS_CHECK,
    NOT_PUBLIC,
    NO_ANSWER_FROM_DNS,
    DOES_NOT_RESOLVE,
    TIMED_OUT,
    CONNECT_FAILED,
    REDIRECT,
    HTTP_STATUS,
    HTTP_STATUS_WITH,
    REJECTIONS,
    FAILING,
    SWITCHED_OFF_BY_USER,
    SWITCHED_OFF,
    NOT_TOLD,
    TOO_OLD_FOR_META,
    TOO_OLD,
    NO_GOOGLE_CLICK,
    TIKTOK_REFUSED,
    OAUTH_FAILED,
    NO_ACCESS_TOKEN,
    NETWORK,
    NETWORK_BARE,
)


def read_problem(text: str) -> tuple[str, dict[str, str]] | None:
    """The kind of a stored problem and its parts; None for a text of no known kind."""
    for problem in PROBLEMS:
        found = problem.pattern.fullmatch(text)
        if found is not None:
            return problem.key, found.groupdict()
    return None


def explain(t: Translator, text: str) -> str:
    """A stored problem in ``t``'s language, its detail after the sentence (a detail that is a
    problem too, said in turn); a text of no known kind through the error catalog.

    >>> from trilha.i18n import translator
    >>> explain(translator("pt-BR"), "ConnectError: All connection attempts failed")
    'Não foi possível conectar ao destino: All connection attempts failed'
    """
    read = read_problem(text)
    if read is None:
        return t.error(text)
    key, parts = read
    said = {name: _part(t, name, value) for name, value in parts.items()}
    return t(f"problem.{key}", **said)


def _part(t: Translator, name: str, value: str) -> str:
    if name in NESTED:
        return explain(t, value)
    if name == "status":
        return t.ui.get(f"conversion_status.{value}", value)
    return value
