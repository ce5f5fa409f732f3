"""Who this broker is: node id, advertised endpoint and cluster id.

The cluster id is generated once (Kafka's form: a random UUID as 22 characters of URL-safe base64) and
kept in `meta.properties` in the data directory, as a KRaft broker keeps it, so it is stable across
restarts and clients that cache it are not confused.
"""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

from groupcoord.protocol.frozen import frozen_dataclass

META_FILE = "meta.properties"


@frozen_dataclass
class ClusterIdentity:
    """The broker as clients see it: node id, advertised host and port, cluster id."""
    node_id: int
    host: str
    port: int
    cluster_id: str

    @property
    def controller_id(self) -> int:
        """Single node: this broker is its own controller."""
        return self.node_id


def new_cluster_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def read_meta(data_dir: Path) -> dict[str, str]:
    path = data_dir / META_FILE
    if not path.exists():
        return {}
    props: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        props[key.strip()] = value.strip()
    return props


def load_or_create_cluster_id(data_dir: Path, node_id: int, wanted: str | None = None) -> str:
    """The persisted id; `wanted` (from config) is written on first start and must match afterwards."""
    props = read_meta(data_dir)
    existing = props.get("cluster.id")
    if existing:
        if wanted and wanted != existing:
            raise ValueError(f"data dir {data_dir} belongs to cluster {existing}, not {wanted}")
        return existing
    cluster_id = wanted or new_cluster_id()
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = data_dir / (META_FILE + ".tmp")
    tmp.write_text(f"#groupcoord\ncluster.id={cluster_id}\nnode.id={node_id}\nversion=1\n")
    tmp.replace(data_dir / META_FILE)
    return cluster_id
