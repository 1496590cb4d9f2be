"""The Helm chart in helm/kopa-edge: lint, render, validate offline against the Kubernetes schemas, and check
the properties operations rely on (one beat, secrets by reference only, probes, hardening, egress policy).

Needs `helm` (PATH or $HOME/.cache/kopa/bin/helm) and the `kubernetes-validate` package; both come from
`bash scripts/install_helm.sh`. Without them the module is skipped locally and fails under CI=true.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHART = ROOT / "helm" / "kopa-edge"
VALUE_FILES = sorted((CHART / "ci").glob("*.yaml"))
PRODUCTION = CHART / "ci" / "production-values.yaml"
SANDBOX = CHART / "ci" / "sandbox-values.yaml"
K8S_VERSION = "1.30.0"
RELEASE = "kopa"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CRD_GROUPS = ("keda.sh/", "monitoring.coreos.com/")

Doc = dict[str, Any]


def _missing(what: str) -> None:
    message = f"{what} is not installed: run `bash scripts/install_helm.sh`"
    if IN_CI:
        pytest.fail(message + " (CI must run the chart tests)")
    pytest.skip(message)


@cache
def _helm_path() -> str | None:
    found = shutil.which("helm")
    if found:
        return found
    cached = Path(os.environ.get("KOPA_TOOLS_BIN") or Path.home() / ".cache" / "kopa" / "bin") / "helm"
    return str(cached) if cached.is_file() and os.access(cached, os.X_OK) else None


def helm_bin() -> str:
    path = _helm_path()
    if path is None:
        _missing("helm")
        raise AssertionError("unreachable")
    return path


def validator() -> Any:
    try:
        return importlib.import_module("kubernetes_validate")
    except ImportError:
        _missing("kubernetes-validate (Python package with the Kubernetes JSON schemas)")
        raise AssertionError("unreachable") from None


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm_bin(), *args], capture_output=True, text=True, timeout=60, check=False)


@cache
def _render(values: str | None, sets: tuple[str, ...] = ()) -> tuple[Doc, ...]:
    args = ["template", RELEASE, str(CHART), "--namespace", "kopa", "--kube-version", K8S_VERSION]
    if values:
        args += ["-f", values]
    for item in sets:
        args += ["--set", item]
    proc = helm(*args)
    assert proc.returncode == 0, proc.stderr
    return tuple(d for d in yaml.safe_load_all(proc.stdout) if d)


def render(values: Path | None = None, *sets: str) -> list[Doc]:
    return list(_render(str(values) if values else None, tuple(sets)))


def by_kind(docs: list[Doc], kind: str) -> list[Doc]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[Doc], kind: str, component: str) -> Doc:
    found = [d for d in by_kind(docs, kind) if d["metadata"]["labels"].get("app.kubernetes.io/component") == component]
    assert len(found) == 1, f"expected one {kind} for {component}, got {len(found)}"
    return found[0]


def pod_specs(docs: list[Doc]) -> Iterator[tuple[str, Doc]]:
    for d in docs:
        if d["kind"] in ("Deployment", "Job", "StatefulSet", "DaemonSet"):
            yield f"{d['kind']}/{d['metadata']['name']}", d["spec"]["template"]["spec"]


def containers(spec: Doc) -> list[Doc]:
    return [*spec.get("initContainers", []), *spec["containers"]]


def walk(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{path}[{i}]")
    else:
        yield path, node


values_param = pytest.mark.parametrize("values", VALUE_FILES, ids=[p.stem for p in VALUE_FILES])
#: Names of settings that hold a secret (a count of streams per token, KOPA_BATCHES__ITEM_STREAMS_PER_TOKEN, holds
#: none).
SECRET_LIKE = re.compile(r"PASSWORD|(?<!_PER_)TOKEN|SERVICE_KEY")


def test_value_sets_present() -> None:
    assert {p.name for p in VALUE_FILES} >= {"minimal-values.yaml", "production-values.yaml", "sandbox-values.yaml"}


@values_param
def test_lint(values: Path) -> None:
    proc = helm("lint", "--strict", str(CHART), "-f", str(values), "--kube-version", K8S_VERSION)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- offline schema validation ------------------------------------------------------------------------------

# The custom resources have no schema in kubernetes-validate: these check the fields the chart sets.
_SCALED_OBJECT = {
    "type": "object",
    "required": ["spec"],
    "properties": {
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["scaleTargetRef", "triggers"],
            "properties": {
                "scaleTargetRef": {
                    "type": "object",
                    "required": ["name"],
                    "additionalProperties": False,
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"const": "Deployment"},
                        "name": {"type": "string"},
                    },
                },
                "minReplicaCount": {"type": "integer", "minimum": 0},
                "maxReplicaCount": {"type": "integer", "minimum": 1},
                "pollingInterval": {"type": "integer", "minimum": 1},
                "cooldownPeriod": {"type": "integer", "minimum": 0},
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["type", "metadata"],
                        "additionalProperties": False,
                        "properties": {
                            "type": {"const": "redis"},
                            "metadata": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                                "required": ["address", "listName", "listLength"],
                            },
                            "authenticationRef": {"type": "object", "required": ["name"]},
                        },
                    },
                },
            },
        }
    },
}
_TRIGGER_AUTH = {
    "type": "object",
    "required": ["spec"],
    "properties": {
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "secretTargetRef": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["parameter", "name", "key"],
                        "additionalProperties": False,
                        "properties": {
                            "parameter": {"type": "string"},
                            "name": {"type": "string"},
                            "key": {"type": "string"},
                        },
                    },
                }
            },
        }
    },
}
_SERVICE_MONITOR = {
    "type": "object",
    "required": ["spec"],
    "properties": {
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["selector", "endpoints"],
            "properties": {
                "namespaceSelector": {"type": "object", "properties": {"matchNames": {"type": "array"}}},
                "selector": {"type": "object", "required": ["matchLabels"]},
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["port", "path"],
                        "properties": {
                            "port": {"type": "string"},
                            "path": {"type": "string"},
                            "interval": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                            "scrapeTimeout": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                        },
                    },
                },
            },
        }
    },
}
_CRD_SCHEMAS = {
    ("keda.sh/v1alpha1", "ScaledObject"): _SCALED_OBJECT,
    ("keda.sh/v1alpha1", "TriggerAuthentication"): _TRIGGER_AUTH,
    ("monitoring.coreos.com/v1", "ServiceMonitor"): _SERVICE_MONITOR,
}
_META = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata"],
    "properties": {"metadata": {"type": "object", "required": ["name", "labels"]}},
}


def validate_manifest(doc: Doc) -> None:
    if doc["apiVersion"].startswith(CRD_GROUPS):
        schema = _CRD_SCHEMAS.get((doc["apiVersion"], doc["kind"]))
        assert schema is not None, f"no structural schema for {doc['apiVersion']} {doc['kind']}"
        jsonschema.validate(doc, _META)
        jsonschema.validate(doc, schema)
        return
    validator().validate(doc, K8S_VERSION, strict=True)


@values_param
def test_rendered_manifests_validate_offline(values: Path) -> None:
    docs = render(values)
    assert docs
    for doc in docs:
        validate_manifest(doc)


def test_validator_catches_errors() -> None:
    """The offline validator is not vacuous: a typo'd field and a wrong type are rejected."""
    kv = validator()
    deploy = json.loads(json.dumps(one(render(), "Deployment", "api")))
    deploy["spec"]["replicas"] = "two"
    with pytest.raises(kv.ValidationError):
        kv.validate(deploy, K8S_VERSION, strict=True)
    deploy = json.loads(json.dumps(one(render(), "Deployment", "api")))
    deploy["spec"]["template"]["spec"]["containers"][0]["securityContxt"] = {}
    with pytest.raises(kv.ValidationError):
        kv.validate(deploy, K8S_VERSION, strict=True)
    scaled = json.loads(json.dumps(by_kind(render(PRODUCTION), "ScaledObject")[0]))
    scaled["spec"]["triggers"][0]["type"] = "rabbitmq"
    with pytest.raises(jsonschema.ValidationError):
        validate_manifest(scaled)


# -- workloads -----------------------------------------------------------------------------------------------


@values_param
def test_beat_is_a_single_replica_replaced_with_recreate(values: Path) -> None:
    beat = one(render(values), "Deployment", "beat")
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "Recreate"}
    assert beat["spec"]["template"]["spec"]["containers"][0]["args"] == ["beat"]
    hpas = [h["spec"]["scaleTargetRef"]["name"] for h in by_kind(render(values), "HorizontalPodAutoscaler")]
    assert beat["metadata"]["name"] not in hpas


def test_process_commands() -> None:
    docs = render()
    api = one(docs, "Deployment", "api")["spec"]["template"]["spec"]["containers"][0]
    assert [*api["command"], *api["args"]] == ["kopa", "serve", "--host", "0.0.0.0", "--port", "8000"]
    job = one(docs, "Job", "graph-init")["spec"]["template"]["spec"]["containers"][0]
    assert [*job["command"], *job["args"]] == ["kopa", "graph", "init"]


@values_param
def test_workers_consume_separate_queues(values: Path) -> None:
    docs = render(values)
    queues = {}
    for kind in ("verification", "synthesis"):
        c = one(docs, "Deployment", f"worker-{kind}")["spec"]["template"]["spec"]["containers"][0]
        args = [*c["command"], *c["args"]]
        assert args[:2] == ["kopa", "worker"]
        queues[kind] = args[args.index("--queues") + 1]
        assert args[args.index("--concurrency") + 1].isdigit()
    assert queues == {"verification": "verification", "synthesis": "synthesis"}


def test_worker_concurrency_comes_from_values() -> None:
    docs = render(None, "workers.verification.concurrency=7", "workers.synthesis.concurrency=3")
    for kind, n in (("verification", "7"), ("synthesis", "3")):
        args = one(docs, "Deployment", f"worker-{kind}")["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("--concurrency") + 1] == n


@values_param
def test_api_probes(values: Path) -> None:
    docs = render(values)
    c = one(docs, "Deployment", "api")["spec"]["template"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports["http"] == 8000
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = c[probe]["httpGet"]
        assert get["path"] == path
        assert ports.get(get["port"], get["port"]) == 8000
    svc = one(docs, "Service", "api")
    assert svc["spec"]["ports"][0]["targetPort"] in ("http", 8000)


@values_param
def test_pods_are_hardened(values: Path) -> None:
    specs = list(pod_specs(render(values)))
    assert len(specs) >= 5
    for where, spec in specs:
        psc = spec["securityContext"]
        assert psc["runAsNonRoot"] is True, where
        assert psc["runAsUser"] == 10001, where
        assert psc["seccompProfile"]["type"] == "RuntimeDefault", where
        assert spec["automountServiceAccountToken"] is False, where
        vols = {v["name"]: v for v in spec["volumes"]}
        for c in containers(spec):
            sc = c["securityContext"]
            assert sc["runAsNonRoot"] is True, where
            assert sc["runAsUser"] == 10001, where
            assert sc["readOnlyRootFilesystem"] is True, where
            assert sc["allowPrivilegeEscalation"] is False, where
            assert "ALL" in sc["capabilities"]["drop"], where
            assert not sc["capabilities"].get("add"), where
            assert sc["seccompProfile"]["type"] == "RuntimeDefault", where
            mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
            for path in ("/tmp", "/home/kopa/data"):
                assert path in mounts, (where, path)
                assert "emptyDir" in vols[mounts[path]], (where, path)
            assert c["resources"]["requests"] and c["resources"]["limits"], where


def test_service_account_token_not_mounted() -> None:
    sa = by_kind(render(), "ServiceAccount")
    assert len(sa) == 1 and sa[0]["automountServiceAccountToken"] is False


@values_param
def test_hook_job(values: Path) -> None:
    job = one(render(values), "Job", "graph-init")
    ann = job["metadata"]["annotations"]
    assert set(ann["helm.sh/hook"].split(",")) == {"pre-install", "pre-upgrade"}
    assert "before-hook-creation" in ann["helm.sh/hook-delete-policy"]
    assert int(ann["helm.sh/hook-weight"]) <= 0
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    env = {e["name"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert {"KOPA_STORE", "KOPA_NEO4J__URI", "KOPA_NEO4J__USER"} <= env  # inline: no ConfigMap yet on install


# -- settings and secrets ------------------------------------------------------------------------------------


@values_param
def test_configmap_settings(values: Path) -> None:
    data = by_kind(render(values), "ConfigMap")[0]["data"]
    assert data["KOPA_STORE"] == "neo4j"
    assert data["KOPA_NEO4J__URI"].startswith(("bolt://", "neo4j://"))
    assert data["KOPA_NEO4J__USER"]
    assert data["KOPA_REDIS_URL"].startswith(("redis://", "rediss://"))
    assert "@" not in data["KOPA_REDIS_URL"]
    hosts = json.loads(data["KOPA_ALLOWED_HOSTS"])
    assert isinstance(hosts, list) and all(isinstance(h, str) for h in hosts) and hosts
    assert all(k.startswith("KOPA_") for k in data)
    assert not [k for k in data if SECRET_LIKE.search(k)]
    assert data["KOPA_ENV"] == _merged(values)["config"]["env"]
    assert (data["KOPA_ENV"] == "staging") == (values.stem == "sandbox-values")


@values_param
def test_rendered_settings_are_accepted_by_the_application(values: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the pods get (ConfigMap + secret env, with stand-ins for the secret values) parses as Settings."""
    from core.settings import Settings

    docs = render(values)
    data = by_kind(docs, "ConfigMap")[0]["data"]
    env = dict(data)
    api = one(docs, "Deployment", "api")["spec"]["template"]["spec"]["containers"][0]
    stand_in = "stand-in-4f1d9c2ab7e05368"  # a long random-looking value: production refuses short defaults
    for e in api.get("env", []):
        env[e["name"]] = e.get("value", stand_in).replace("$(REDIS_PASSWORD)", stand_in)
    for name in [n for n in os.environ if n.startswith("KOPA_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.store == "neo4j"
    assert settings.neo4j.uri == data["KOPA_NEO4J__URI"]
    assert set(json.loads(data["KOPA_ALLOWED_HOSTS"])) <= set(settings.allowed_hosts)
    assert str(settings.data_dir) == "/home/kopa/data"
    assert settings.redis_url and settings.redis_url.startswith(("redis://", "rediss://"))
    settings.override_map()
    check = getattr(settings, "check_production", None)  # the start-up guard, where the application has one
    if callable(check):
        check()


#: The reader-batch settings (core.settings.BatchSettings) the chart lists under config.batches: value key ->
#: (environment variable, the chart's default, the application's default).
BATCH_SETTINGS = {
    "teamDailyCalls": ("KOPA_BATCHES__TEAM_DAILY_CALLS", "20000", "team_daily_calls"),
    "teamBudgets": ("KOPA_BATCHES__TEAM_BUDGETS", "", "team_budgets"),
    "sharedPool": ("KOPA_BATCHES__SHARED_POOL", "", "shared_pool"),
    "itemStreamsPerToken": ("KOPA_BATCHES__ITEM_STREAMS_PER_TOKEN", "4", "item_streams_per_token"),
}


def test_batch_settings_are_listed_with_comments_and_reach_api_and_workers() -> None:
    """config.batches lists the batch budget, pool and stream settings with a comment naming each variable; the
    ConfigMap carries them (the application's defaults unless set), and the API, both workers and beat read that
    ConfigMap."""
    from core.settings import BatchSettings

    text = (CHART / "values.yaml").read_text()
    values = yaml.safe_load(text)["config"]["batches"]
    assert set(values) == set(BATCH_SETTINGS)
    app_defaults = BatchSettings()
    for key, (var, default, field) in BATCH_SETTINGS.items():
        assert re.search(rf"^\s*# {var}: \S", text, re.M), f"values.yaml has no comment for {var}"
        assert str(values[key]) == default == str(getattr(app_defaults, field)), key
    docs = render()
    configmap = by_kind(docs, "ConfigMap")[0]
    for var, default, _ in BATCH_SETTINGS.values():
        assert configmap["data"][var] == default, var
    for component in ("api", "worker-verification", "worker-synthesis", "beat"):
        c = one(docs, "Deployment", component)["spec"]["template"]["spec"]["containers"][0]
        refs = [e["configMapRef"]["name"] for e in c.get("envFrom", []) if "configMapRef" in e]
        assert configmap["metadata"]["name"] in refs, component


def test_batch_settings_from_values_parse_as_the_application_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.settings import Settings

    docs = render(
        None,
        "config.batches.teamDailyCalls=500",
        "config.batches.teamBudgets=team-a=50\\,ops=0",
        "config.batches.sharedPool=team-a\\,team-b",
        "config.batches.itemStreamsPerToken=2",
    )
    data = by_kind(docs, "ConfigMap")[0]["data"]
    assert data["KOPA_BATCHES__TEAM_DAILY_CALLS"] == "500" and data["KOPA_BATCHES__ITEM_STREAMS_PER_TOKEN"] == "2"
    for name in [n for n in os.environ if n.startswith("KOPA_")]:
        monkeypatch.delenv(name)
    for var, _, _ in BATCH_SETTINGS.values():
        monkeypatch.setenv(var, data[var])
    batches = Settings().batches
    assert batches.team_budget("team-a") == 50 and batches.team_budget("ops") == 0
    assert batches.team_budget("team-c") == 500
    assert batches.shared_pool_teams() == {"team-a", "team-b"} and batches.item_streams_per_token == 2


def _secret_names(values: Path) -> set[str]:
    v = yaml.safe_load(values.read_text()) or {}
    names = {
        (v.get("neo4j") or {}).get("existingSecret"),
        (v.get("redis") or {}).get("existingSecret"),
        (v.get("sandbox") or {}).get("adminToken", {}).get("existingSecret"),
    }
    for key in ("bootstrapToken", "serviceKeys"):
        names.add(((v.get("secrets") or {}).get(key) or {}).get("existingSecret"))
    return {n for n in names if n}


@values_param
def test_secrets_only_by_reference(values: Path) -> None:
    docs = render(values)
    assert not by_kind(docs, "Secret"), "the chart must never render a Secret"
    allowed = _secret_names(values)
    seen = set()
    for where, spec in pod_specs(docs):
        for c in containers(spec):
            for e in c.get("env", []):
                ref = (e.get("valueFrom") or {}).get("secretKeyRef")
                if ref:
                    assert ref["name"] in allowed, (where, e)
                    seen.add(ref["name"])
                elif SECRET_LIKE.search(e["name"]) or e["name"].endswith("_KEY"):
                    pytest.fail(f"{where}: {e['name']} is not taken from a Secret")
                else:
                    value = str(e.get("value", ""))
                    assert not re.search(r"://[^/@]*:[^/@$]+@", value), (where, e["name"])  # no inline password
            for src in c.get("envFrom", []):
                assert "secretRef" not in src, where
    assert seen == allowed, f"referenced {seen}, declared {allowed}"


def test_secret_name_canary_appears_only_as_a_name() -> None:
    canary = "canary-5e7b1c"
    docs = render(
        PRODUCTION,
        f"neo4j.existingSecret={canary}-neo4j",
        f"redis.existingSecret={canary}-redis",
        f"secrets.bootstrapToken.existingSecret={canary}-boot",
        f"secrets.serviceKeys.existingSecret={canary}-keys",
    )
    hits = [
        (f"{d['kind']}/{d['metadata']['name']}", p)
        for d in docs
        for p, v in walk(d)
        if isinstance(v, str) and canary in v
    ]
    assert hits
    for where, path in hits:
        assert re.search(r"(secretKeyRef\.name|secretTargetRef\[\d+\]\.name)$", path), (where, path)
    assert not by_kind(docs, "Secret")


def test_redis_password_completes_the_url_in_the_pod() -> None:
    docs = render(PRODUCTION)
    env = one(docs, "Deployment", "worker-verification")["spec"]["template"]["spec"]["containers"][0]["env"]
    names = [e["name"] for e in env]
    assert names.index("REDIS_PASSWORD") < names.index("KOPA_REDIS_URL")  # $(VAR) needs the earlier entry
    url = next(e["value"] for e in env if e["name"] == "KOPA_REDIS_URL")
    assert url.startswith("rediss://:$(REDIS_PASSWORD)@")


# -- scaling, disruption, monitoring -------------------------------------------------------------------------


def test_optional_parts_are_off_by_default() -> None:
    kinds = {d["kind"] for d in render()}
    assert not kinds & {"ScaledObject", "TriggerAuthentication", "ServiceMonitor", "Secret"}
    assert not [d for d in render() if d["metadata"]["labels"].get("app.kubernetes.io/component") == "sandbox"]


def test_production_scaling_and_monitoring() -> None:
    docs = render(PRODUCTION)
    for comp in ("api", "worker-verification", "worker-synthesis"):
        assert (
            one(docs, "PodDisruptionBudget", comp)["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"]
            == comp
        )
    hpas = {h["metadata"]["labels"]["app.kubernetes.io/component"]: h for h in by_kind(docs, "HorizontalPodAutoscaler")}
    assert set(hpas) == {"api", "worker-synthesis"}  # KEDA owns the verification worker's HPA
    assert all(h["apiVersion"] == "autoscaling/v2" for h in hpas.values())
    for comp in ("api", "worker-verification", "worker-synthesis"):
        assert "replicas" not in one(docs, "Deployment", comp)["spec"]  # the autoscaler owns the count
    so = one(docs, "ScaledObject", "worker-verification")
    assert so["apiVersion"] == "keda.sh/v1alpha1"
    assert so["spec"]["scaleTargetRef"]["name"] == one(docs, "Deployment", "worker-verification")["metadata"]["name"]
    trigger = so["spec"]["triggers"][0]
    assert trigger["type"] == "redis" and trigger["metadata"]["listName"] == "verification"
    sm = one(docs, "ServiceMonitor", "api")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert sm["spec"]["endpoints"][0]["path"] == "/metrics"
    assert sm["spec"]["endpoints"][0]["port"] == "http"


def test_hpas_for_api_and_both_workers() -> None:
    docs = render(PRODUCTION, "workers.verification.keda.enabled=false")
    comps = {h["metadata"]["labels"]["app.kubernetes.io/component"] for h in by_kind(docs, "HorizontalPodAutoscaler")}
    assert comps == {"api", "worker-verification", "worker-synthesis"}
    assert not by_kind(docs, "ScaledObject")


# -- network policy ------------------------------------------------------------------------------------------


@values_param
def test_network_policy_limits_egress(values: Path) -> None:
    docs = render(values)
    policies = by_kind(docs, "NetworkPolicy")
    egress = [p for p in policies if "Egress" in p["spec"]["policyTypes"]]
    assert len(egress) == 1
    spec = egress[0]["spec"]
    assert spec["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] == RELEASE
    rules = spec["egress"]
    ports = {(p["port"], p.get("protocol", "TCP")) for r in rules for p in r.get("ports", [])}
    assert {(53, "UDP"), (53, "TCP")} <= ports
    v = yaml.safe_load(values.read_text())
    found = re.search(r"//[^/:]+:(\d+)", v["redis"]["url"])
    redis_port = int(found.group(1)) if found else 6379
    assert (7687, "TCP") in ports and (redis_port, "TCP") in ports
    assert all(r.get("ports") for r in rules), "every egress rule is limited to ports"
    cidrs = {t["ipBlock"]["cidr"] for r in rules for t in r.get("to", []) if "ipBlock" in t}
    wanted = {u["cidr"] for u in (v.get("networkPolicy") or {}).get("upstreams", [])}
    assert wanted <= cidrs
    assert "0.0.0.0/0" not in cidrs
    api_in = [
        p for p in policies if p["spec"]["podSelector"]["matchLabels"].get("app.kubernetes.io/component") == "api"
    ]
    assert api_in and api_in[0]["spec"]["ingress"][0]["ports"] == [{"port": 8000, "protocol": "TCP"}]


def test_sandbox_values() -> None:
    docs = render(SANDBOX)
    sb = one(docs, "Deployment", "sandbox")
    c = sb["spec"]["template"]["spec"]["containers"][0]
    assert [*c["command"], *c["args"]] == ["kopa", "sandbox", "serve", "--host", "0.0.0.0", "--port", "8090"]
    svc = one(docs, "Service", "sandbox")
    data = by_kind(docs, "ConfigMap")[0]["data"]
    target = f"http://{svc['metadata']['name']}:{svc['spec']['ports'][0]['port']}"
    overrides = dict(pair.split("=", 1) for pair in data["KOPA_UPSTREAM_OVERRIDES"].split(","))
    assert overrides and set(overrides.values()) == {target}
    assert svc["metadata"]["name"] in json.loads(data["KOPA_ALLOWED_HOSTS"])
    egress = next(p for p in by_kind(docs, "NetworkPolicy") if "Egress" in p["spec"]["policyTypes"])
    assert any(p["port"] == 8090 for r in egress["spec"]["egress"] for p in r.get("ports", []))


# -- values schema -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "api.replicas=notanumber",
        "beat.replicas=2",
        "securityContext.runAsNonRoot=false",
        "securityContext.readOnlyRootFilesystem=false",
        "config.extra.KOPA_NEO4J__PASSWORD=hunter2",
        "redis.url=redis://user:pw@redis:6379/0",
        "workers.verification.concurrency=0",
        "config.batches.itemStreamsPerToken=0",
        "config.batches.teamDailyCalls=-1",
        "config.batches.teamBudgets=team-a=lots",
        "config.batches.unknown=1",
    ],
)
def test_values_schema_rejects(bad: str) -> None:
    proc = helm("template", RELEASE, str(CHART), "--kube-version", K8S_VERSION, "--set", bad)
    assert proc.returncode != 0, f"--set {bad} was accepted"
    assert "schema" in proc.stderr.lower(), proc.stderr


def test_values_schema_is_draft07() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    for path in [CHART / "values.yaml", *VALUE_FILES]:
        jsonschema.Draft7Validator(schema).validate(
            yaml.safe_load(path.read_text()) if path.name == "values.yaml" else _merged(path)
        )


def _merged(path: Path) -> Doc:
    def merge(a: Any, b: Any) -> Any:
        if isinstance(a, dict) and isinstance(b, dict):
            return {k: merge(a.get(k), b[k]) if k in b else a[k] for k in {*a, *b}}
        return b

    base = yaml.safe_load((CHART / "values.yaml").read_text())
    return dict(merge(base, yaml.safe_load(path.read_text())))


def test_notes_give_the_first_steps(tmp_path: Path) -> None:
    """NOTES.txt (rendered through a scratch copy of the chart: `helm template` skips NOTES)."""
    chart = tmp_path / "kopa-edge"
    shutil.copytree(CHART, chart)
    notes = (chart / "templates" / "NOTES.txt").read_text()
    (chart / "templates" / "_notes_probe.tpl").write_text('{{- define "probe.notes" -}}\n' + notes + "{{- end }}\n")
    (chart / "templates" / "notes-probe.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: |\n"
        '    {{- include "probe.notes" . | nindent 4 }}\n'
    )
    proc = helm(
        "template",
        RELEASE,
        str(chart),
        "--namespace",
        "kopa",
        "-f",
        str(PRODUCTION),
        "--show-only",
        "templates/notes-probe.yaml",
    )
    assert proc.returncode == 0, proc.stderr
    text = yaml.safe_load(proc.stdout)["data"]["notes"]
    assert "kubectl -n kopa exec deploy/kopa-kopa-edge-api -- kopa token create --role admin" in text
    assert "port-forward svc/kopa-kopa-edge-api" in text
    assert "/browser/guide.html" in text
    assert ":play http://127.0.0.1:8000/browser/guide.html" in text
    assert "official Neo4j Helm chart" in text and "managed Redis" in text
