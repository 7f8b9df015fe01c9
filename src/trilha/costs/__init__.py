"""What campaigns cost: cost models with their history (models.py), costs and impressions per
day (days.py) and their CSV import (imports.py), in exact cost units (units.py)."""
