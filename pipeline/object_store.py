"""Segments in object storage: `s3://` and `s3a://` paths through pyarrow's S3 filesystem.

On a cluster the executors must reach the segments themselves; a shared filesystem path works as it is,
and object storage is the other usual answer. pyarrow's filesystem layer runs inside the Python workers
that decode the segments, so the data source needs nothing from Hadoop: `s3a://bucket/prefix` (Hadoop's
spelling, what a Spark user writes) and `s3://bucket/prefix` name the same objects.

Where the store is and how to sign in come, in this order, from the data source's `s3.*` options, from
the Spark configuration a Hadoop user already has (`spark.hadoop.fs.s3a.endpoint`, `.access.key`,
`.secret.key`, `.endpoint.region`), and from the usual AWS variables (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`). They are resolved once on the driver and
travel to the executors inside each input partition, so executors need no environment of their own.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from urllib.parse import urlparse

from groupcoord.protocol.frozen import frozen_dataclass

SCHEMES = ("s3", "s3a")
# data source option -> (Spark/Hadoop configuration key, environment variable)
_SETTINGS = {
    "endpoint": ("spark.hadoop.fs.s3a.endpoint", "AWS_ENDPOINT_URL"),
    "access_key": ("spark.hadoop.fs.s3a.access.key", "AWS_ACCESS_KEY_ID"),
    "secret_key": ("spark.hadoop.fs.s3a.secret.key", "AWS_SECRET_ACCESS_KEY"),
    "region": ("spark.hadoop.fs.s3a.endpoint.region", "AWS_REGION"),
}


def is_object_store(path: str) -> bool:
    return urlparse(path).scheme in SCHEMES


@frozen_dataclass(slots=False)
class S3Settings:
    """Plain values (picklable) that rebuild the same S3 filesystem on every executor."""

    endpoint: str | None = None
    access_key: str | None = None
    secret_key: str | None = None
    region: str | None = None

    @classmethod
    def resolve(cls, options: dict[str, str] | None = None, spark_conf: dict[str, str] | None = None) -> "S3Settings":
        options, spark_conf = options or {}, spark_conf or {}
        values = {}
        for name, (conf_key, env_key) in _SETTINGS.items():
            values[name] = options.get(f"s3.{name}") or spark_conf.get(conf_key) or os.environ.get(env_key) or None
        return cls(**values)

    def as_options(self) -> dict[str, str]:
        return {f"s3.{name}": value for name, value in asdict(self).items() if value}

    def filesystem(self):
        from pyarrow import fs

        kwargs = {"region": self.region or "us-east-1"}
        if self.access_key and self.secret_key:
            kwargs.update(access_key=self.access_key, secret_key=self.secret_key)
        if self.endpoint:
            parsed = urlparse(self.endpoint if "://" in self.endpoint else f"https://{self.endpoint}")
            kwargs.update(endpoint_override=parsed.netloc, scheme=parsed.scheme or "https")
            # A custom endpoint (MinIO, Ceph, moto) is addressed by path, as fs.s3a.path.style.access does.
            kwargs["force_virtual_addressing"] = False
        return fs.S3FileSystem(**kwargs)


def object_key(path: str) -> str:
    """`s3a://bucket/a/b` -> `bucket/a/b`, the form pyarrow's S3 filesystem takes."""
    parsed = urlparse(path)
    return f"{parsed.netloc}/{parsed.path.lstrip('/')}".rstrip("/")


def list_objects(path: str, settings: S3Settings) -> list[tuple[str, int]]:
    """Every object under `path` (recursively) as (URI in the caller's scheme, size)."""
    from pyarrow import fs

    scheme = urlparse(path).scheme
    selector = fs.FileSelector(object_key(path), recursive=True, allow_not_found=True)
    infos = settings.filesystem().get_file_info(selector)
    return [(f"{scheme}://{info.path}", info.size) for info in infos if info.type == fs.FileType.File]


def read_object(path: str, settings: S3Settings) -> bytes:
    with settings.filesystem().open_input_file(object_key(path)) as handle:
        return handle.readall()
