"""Reports: what the clicks and conversions add up to, by any grouping, in any time zone."""
