"""Buyers' personal data: masked in what trilha stores, hashed on conversions, purged after a
retention, forgotten on request (LGPD)."""
