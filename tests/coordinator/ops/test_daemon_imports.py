"""What the daemon's process imports: kio pulls in hypothesis whenever it is installed (as in this test
environment), which cost the daemon a third of its start-up; `groupcoord serve` keeps it out."""

import subprocess
import sys


def _printed_by_a_fresh_process(before: str, after: str) -> list[str]:
    """Runs ``before``, then the daemon's ``keep_test_libraries_out()``, then ``after`` in a new interpreter (the
    rule acts on the process's import system, so it cannot be tried inside the test process); what it printed."""
    code = (f"import sys\n{before}\n"
            "from groupcoord.coordinator.ops.cli import keep_test_libraries_out\n"
            "keep_test_libraries_out()\n"
            f"{after}\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_kio_loads_without_hypothesis_once_serve_keeps_it_out():
    printed = _printed_by_a_fresh_process(
        "", "import groupcoord.coordinator.broker, kio.static.primitive\n"
            "print(sys.modules.get('hypothesis') is None, 'hypothesis.strategies' in sys.modules)")
    assert printed == ["True", "False"]


def test_a_process_that_already_has_hypothesis_keeps_it():
    printed = _printed_by_a_fresh_process(
        "import hypothesis", "import hypothesis.strategies\nprint(sys.modules['hypothesis'] is hypothesis)")
    assert printed == ["True"]


# What the daemon does not import before it says `listening on` (each loads on first use; the warm-up after
# listening may import some of them later). Each entry is something start-up once paid for.
NOT_BEFORE_LISTENING = (
    "ctypes",  # heavy_requests' malloc_trim is looked up by the first trim
    "groupcoord.coordinator.security.acl",  # bindings and filters: ACL admin APIs and the authorizer
    "groupcoord.coordinator.groups.consumer_share_records",  # a consumer or share group's first record
    "groupcoord.coordinator.groups.views",  # the first group listing or metrics scrape
    "groupcoord.coordinator.groups.lazy_requests",  # with the first request of its APIs' handlers
    "groupcoord.protocol.wire_bounds",  # the first request's reader
    # the data plane's services only an API uses: made by their first request (DataPlane's cached properties)
    "groupcoord.coordinator.dataplane.fetch",
    "groupcoord.coordinator.dataplane.fetch_sessions",
    "groupcoord.coordinator.dataplane.list_offsets",
    "groupcoord.coordinator.dataplane.describe_producers",
    "groupcoord.coordinator.dataplane.configs",
    "groupcoord.coordinator.dataplane.config_changes",
    "groupcoord.coordinator.dataplane.delete_records",
    "groupcoord.coordinator.dataplane.log_dirs",
    "groupcoord.coordinator.dataplane.produce",  # and its batch checks: the first Produce
    "groupcoord.coordinator.dataplane.batch_validation",
    "groupcoord.coordinator.dataplane.txn_markers",  # the first transaction marker written
    "groupcoord.coordinator.dataplane.producer_state",  # a partition's producer table: loaded on first use
    "groupcoord.coordinator.dataplane.producer_snapshot",
    "groupcoord.storage.cleaner",  # the compactor: its first pass (after listening) or a topic's deletion
    # the transaction and share coordinators' shards, made when they are activated (a first request, or partitions
    # on disk, after listening) or read
    "groupcoord.coordinator.transactions.shard",
    "groupcoord.coordinator.transactions.metadata",
    "groupcoord.coordinator.transactions.records",
    "groupcoord.coordinator.share.shard",
    "groupcoord.coordinator.share.records",
    "groupcoord.coordinator.share.sessions",  # the first ShareFetch
    "groupcoord.protocol.consumer_protocol",  # the first classic group with members (and the warm-up)
    "groupcoord.protocol.build",  # the first error answer made from kio's entity (a handler failure, a bad version)
    "groupcoord.protocol.control_records",  # the first coordinator partition loaded, the first marker written
    "groupcoord.coordinator.transactions.markers",  # the first transaction markers written
    # the KIP-848 consumer and KIP-932 share groups' code: the first such group, record or request (and the warm-up)
    "groupcoord.coordinator.groups.consumer.group",
    "groupcoord.coordinator.groups.consumer.heartbeat",
    "groupcoord.coordinator.groups.consumer.appliers",
    "groupcoord.coordinator.groups.share.group",
    "groupcoord.coordinator.groups.share.heartbeat",
    "groupcoord.coordinator.groups.share.appliers",
    # TLS and SASL: only a listener that uses them (listener_security.build) or a secured connection loads them
    "groupcoord.coordinator.security.authenticator",
    "groupcoord.coordinator.security.jaas",
    "groupcoord.coordinator.security.principal_mapper",
    "groupcoord.coordinator.security.sasl_mechanisms",
    "groupcoord.coordinator.security.tls",
    "groupcoord.coordinator.server.secure_connection",
    "groupcoord.coordinator.share.share_partition",  # the first share partition loaded
    "groupcoord.coordinator.security.scram",  # read, made or checked credentials only (an empty store needs none)
    "prometheus_client",  # the first metrics scrape (and the warm-up): metrics are plain numbers until then
    "hashlib",  # a share group's metadata hash (and the warm-up)
    "tempfile",  # an embedded broker's throw-away data dir
    "groupcoord.coordinator.security.credential_changes",  # AlterUserScramCredentials' changes and answers
    "groupcoord.coordinator.quotas.alterations",  # AlterClientQuotas' entries and answers
    "groupcoord.coordinator.quotas.quota_filter",  # DescribeClientQuotas' filter
    "groupcoord.coordinator.share.persister_answers",  # a share partition's first load, a state summary read
)


def _at_listening(data_dir) -> tuple[set[str], list[str]]:
    """``groupcoord serve``'s modules at the moment it prints `listening on` (it then stops itself), and the
    dataclasses of its own modules then built whose docstring is the one the dataclass machinery makes: without a
    docstring of its own, a dataclass computes one from ``inspect.signature`` of its ``__init__`` as it is built,
    a cost every start paid for each."""
    code = (
        "import builtins, dataclasses, os, signal, sys\n"
        "from groupcoord.coordinator.ops import cli\n"
        "seen = []\n"
        "real_print = print\n"
        "def undocumented():\n"
        "    for name, module in sorted(sys.modules.items()):\n"
        "        if not name.startswith('groupcoord.') or module is None:\n"
        "            continue\n"
        "        for value in list(vars(module).values()):\n"
        "            if isinstance(value, type) and value.__module__ == name and dataclasses.is_dataclass(value) \\\n"
        "                    and (value.__doc__ or '').startswith(value.__name__ + '('):\n"
        "                yield f'{name}.{value.__qualname__}'\n"
        "def spy(*args, **kwargs):\n"
        "    if not seen and str(args[0]).startswith('listening on'):\n"
        "        seen.append((sorted(sys.modules), sorted(set(undocumented()))))\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return real_print(*args, **kwargs)\n"
        "builtins.print = spy\n"
        f"cli.main(['serve', '--listen', '127.0.0.1:0', '--metrics-port', '0', '--data-dir', {str(data_dir)!r}])\n"
        "real_print('MODULES', ' '.join(seen[0][0]))\n"
        "real_print('UNDOCUMENTED', ' '.join(seen[0][1]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    (modules,) = [line for line in done.stdout.splitlines() if line.startswith("MODULES ")]
    (undocumented,) = [line for line in done.stdout.splitlines() if line.startswith("UNDOCUMENTED")]
    return set(modules.split()[1:]), undocumented.split()[1:]


def test_serve_reaches_listening_without_what_loads_on_first_use(tmp_path):
    modules, undocumented = _at_listening(tmp_path)
    assert "groupcoord.coordinator.broker" in modules  # the spy saw the real start
    assert modules.isdisjoint(NOT_BEFORE_LISTENING), sorted(modules.intersection(NOT_BEFORE_LISTENING))
    assert undocumented == [], undocumented
