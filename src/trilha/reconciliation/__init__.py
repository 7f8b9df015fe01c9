"""Reconciliation: a sales platform's export compared with trilha's conversions.

``table`` reads the uploaded file (CSV or XLSX) into text cells, ``layouts`` knows where each
platform puts the transaction id, status, value, currency and date, ``sales`` turns rows into
sales, ``compare`` matches them with the conversions and the postback log, ``export`` writes
the result as a spreadsheet-friendly CSV; these are pure. ``store`` owns the SQL.
"""
