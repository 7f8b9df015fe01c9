"""What the pipeline learned about a postback on its way, for its log entry."""

from __future__ import annotations

from dataclasses import dataclass, field

from trilha.merchants import Merchant
from trilha.postbacks.mapping import Fields
from trilha.postbacks.payload import Tree
from trilha.postbacks.secret_fields import KNOWN_SECRET_FIELDS, KNOWN_SECRET_HEADERS, values_at


@dataclass
class Trace:
    """What the pipeline learned on its way, for the log entry (even when it stops early)."""

    postback_id: str
    workspace_id: str | None = None
    currency: str | None = None  # the workspace's, for amounts sent without one
    merchant_id: str | None = None
    platform: str | None = None  # the merchant's preset, once it is known
    secrets: list[str] = field(default_factory=list)
    secret_headers: set[str] = field(default_factory=set)  # stored masked whole
    auth_failed: bool = False
    fields: Fields | None = None
    read: dict[str, str] = field(default_factory=dict)  # as sent, when the mapping failed
    click_id: str | None = None
    campaign_id: str | None = None
    keeps_buyer_data: bool = False  # the workspace's choice; off: masked in the log
    payload: Tree | None = None  # the fields as last read: the buyer's are masked in the log

    def at_workspace(self, workspace_id: str, currency: str, keeps_buyer_data: bool) -> None:
        self.workspace_id = workspace_id
        self.currency = currency
        self.keeps_buyer_data = keeps_buyer_data

    def at_merchant(self, merchant: Merchant, payload: Tree, query: Tree) -> None:
        """What the log masks for this merchant: its secret, and whatever the request sent where
        a secret or signature goes (right or wrong), in the body, the query or a header (whose
        value the log then masks wherever else it appears). Without a merchant of the
        workspace (generic), the sender may be any platform: every preset's secret field."""
        self.merchant_id = merchant.id
        self.platform = merchant.preset.name
        if merchant.id is None:
            self.note_unknown_secrets(self.payload or {}, query)
        self.payload = payload
        self.secret_headers |= merchant.secret_headers
        if merchant.secret:
            self.secrets.append(merchant.secret)
        self.secrets.extend(values_at(merchant.secret_paths, payload, query))

    def note_unknown_secrets(self, payload: Tree, query: Tree) -> None:
        """Whatever sits in any preset's secret field or header, masked: a request that names
        no merchant of the workspace may come from any platform (a Hotmart webhook pasted as
        /postback, or sent to a mistyped /pb/{key})."""
        self.secret_headers |= KNOWN_SECRET_HEADERS
        self.secrets.extend(values_at(KNOWN_SECRET_FIELDS, payload, query))
