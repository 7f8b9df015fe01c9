"""Conversions: what a sale became, once, with every status it went through.

- ``status``: the statuses and the legal changes between them;
- ``outcome``: what became of a reported sale (or of the request that reported it);
- ``dedupe``: when a report repeats one already counted;
- ``record``: recording a reported sale on its click (the write path);
- ``attribution``: the click a conversion lands on;
- ``orphans``: conversions whose click is unknown, attached later;
- ``lookup``: reading conversions back.
"""
