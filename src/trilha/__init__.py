"""trilha: a self-hosted server-to-server postback conversion tracker."""

__version__ = "0.1.0"
