"""Receiving postbacks: from a platform's raw request to one recorded outcome."""
