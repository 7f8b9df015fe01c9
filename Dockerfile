# syntax=docker/dockerfile:1
# trilha's image: `trilha serve` as a non-root user, SQLite under /data unless
# TRILHA_DATABASE_URL names another database (compose.yaml sets PostgreSQL's).
#
#   docker build -t trilha .
#   docker run -p 8000:8000 -v trilha:/data trilha
#
# Two stages: the first builds wheels of trilha and every dependency; the second installs those
# wheels alone, so no source tree, compiler or pip cache reaches the image.

ARG PYTHON_IMAGE=python:3.12-slim-trixie

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --wheel-dir=/wheels .

FROM ${PYTHON_IMAGE}
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    TRILHA_HOST=0.0.0.0 \
    TRILHA_PORT=8000 \
    TRILHA_DATABASE_URL=sqlite+aiosqlite:////data/trilha.db
# pg_dump and pg_restore for `trilha backup` and `trilha restore` on PostgreSQL: Debian 13's
# client is PostgreSQL 17's, as new as compose.yaml's server or newer, as pg_dump requires.
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*
# A fixed uid and gid, so that a host directory mounted on /data can be given to them.
RUN groupadd --system --gid 10001 trilha \
    && useradd --system --uid 10001 --gid trilha --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin trilha \
    && install -d -o trilha -g trilha -m 0750 /data
# The builder's wheels are mounted for this step only: none of them stays in a layer.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels trilha
USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 8000
# /healthz answers once the server is up (it migrates the database first); no curl in slim.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('TRILHA_PORT', '8000'), timeout=4)"]
CMD ["trilha", "serve"]
