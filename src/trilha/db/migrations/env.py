"""Alembic environment: runs on the connection trilha.db.migrate hands over."""

from alembic import context

from trilha.db.partitions import not_a_partition
from trilha.db.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    include_object=not_a_partition,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
