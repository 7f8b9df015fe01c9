"""Outbound deliveries: a Destination wants some conversions; each change it wants becomes a
Delivery in the outbox, sent by a worker, every try kept as an attempt."""
