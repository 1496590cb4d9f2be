"""Nothing phones home (docs/operations.md, "Data sovereignty / telemetry"): an on-premise deployment whose data may not
leave sends no usage data anywhere by default.

Neo4j is configured in two places: the local launcher (infra/neo4j, started by scripts/services.sh; it writes the
neo4j.conf of .kopa/run/neo4j-home) and helm/neo4j-values.yaml (the official Neo4j chart). In each, Neo4j 5.26
Community must turn off its usage report, Browser's product analytics and the driver telemetry, and send Browser a
Content-Security-Policy that stops what Browser 5.x loads and sends by itself whatever client.allow_telemetry says
(Segment and Canny scripts, Google Fonts, Sentry performance traces): Neo4j's default policy allows it all.

The file-level tests are fast and fail when a setting goes from any place; the last two read the running server
(skipped without one locally, failed under CI=true, like every infrastructure test). A running Neo4j picks up a
launcher change at its next start (`bash scripts/services.sh stop && bash scripts/services.sh start`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import httpx
import pytest
import yaml

from tests.conftest import need

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "infra" / "neo4j" / "src" / "main" / "java" / "kopa" / "neo4j" / "Launcher.java"
SERVICES = ROOT / "scripts" / "services.sh"
HELM_NEO4J = ROOT / "helm" / "neo4j-values.yaml"
DOCKERFILE = ROOT / "Dockerfile"
TRAINING_RUN = ROOT / "training" / "run.py"
EXPERIMENT = ROOT / "scripts" / "experiment.sh"

#: Neo4j 5.26 settings, each "false" wherever Neo4j is configured
TELEMETRY_OFF = ("dbms.usage_report.enabled", "client.allow_telemetry", "server.bolt.telemetry.enabled")
CSP_KEY = "dbms.security.http_static_content_security_policy_header"
ALLOWLIST_KEY = "browser.remote_content_hostname_whitelist"
#: Enterprise only: Community 5.26 does not declare it (strict validation refuses to start) and its Browser ignores it
ENTERPRISE_ONLY = "browser.allow_outgoing_connections"
#: where Browser 5.x sends or loads from on its own (seen in a headless Chromium with Neo4j's default policy)
THIRD_PARTY = ("segment", "canny", "sentry", "googleapis", "gstatic", "neo4j.io", "intercom")
#: environment that keeps Python libraries (Hugging Face Hub, vLLM, DO_NOT_TRACK-aware ones) quiet
LIBRARY_ENV = {"HF_HUB_DISABLE_TELEMETRY": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}


def launcher_config() -> dict[str, str]:
    """The literal settings the launcher writes into neo4j.conf (`cfg.put("key", "value")`)."""
    return dict(re.findall(r'cfg\.put\("([^"]+)",\s*"([^"]*)"\)', LAUNCHER.read_text()))


def java_constant(name: str) -> str:
    """A `static final String NAME = "..." + "...";` of the launcher, concatenated."""
    m = re.search(rf"static final String {name}\s*=\s*(.*?);\s*$", LAUNCHER.read_text(), re.M | re.S)
    assert m, f"{name} is gone from {LAUNCHER.name}"
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))


def expected_policy(template: str, allowlist: str) -> str:
    """The launcher's browserCsp(allowlist): each allow-listed host as "host:*" where %1$s stands."""
    hosts = "".join(f" {'http: https:' if h == '*' else h + ':*'}" for h in map(str.strip, allowlist.split(",")) if h)
    return template.replace("%1$s", hosts)


def directives(policy: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


def assert_closed_policy(policy: str, where: str) -> None:
    """Scripts, styles and fonts only from the server; connections only to it, Bolt and named hosts."""
    d = directives(policy)
    assert d.get("default-src") == ["'self'"], (where, policy)
    assert d.get("script-src") == ["'self'"], (where, policy)  # no Segment / Canny scripts
    assert d.get("font-src") == ["'self'"], (where, policy)  # no Google Fonts
    assert set(d.get("style-src", ["*"])) <= {"'self'", "'unsafe-inline'"}, (where, policy)
    connect = d.get("connect-src", [])
    assert "'self'" in connect, (where, policy)
    assert not {"http:", "https:", "*"} & set(connect), f"{where}: connect-src lets Browser reach any host: {policy}"
    for source in (s for sources in d.values() for s in sources):
        assert source != "*" and not any(t in source for t in THIRD_PARTY), f"{where}: {source} in Browser's policy"


# ---- file level: every place Neo4j is configured ------------------------------------------------------------------


def test_services_script_configures_neo4j_only_through_the_launcher() -> None:
    """services.sh writes no neo4j.conf itself: the launcher does, and a changed Launcher.java is rebuilt on start."""
    script = SERVICES.read_text()
    assert "kopa.neo4j.Launcher" in script
    assert 'Launcher.java" -nt' in script, "services.sh no longer rebuilds the launcher when Launcher.java changes"
    assert not re.search(r"\b(dbms|server|client|browser)\.[a-z_]+\.[a-z_.]+=", script), (
        "services.sh now sets Neo4j settings itself: set the telemetry keys there too and check them here"
    )


def test_no_other_file_configures_neo4j() -> None:
    """The two places checked below are the only ones: a new one must be added here (and turn telemetry off)."""
    setting = re.compile(r"^\s*(?:dbms|server|db)\.[a-z_]+\.[a-z_.]+\s*[:=]|NEO4J_(?:dbms|server|db)_", re.M)
    candidates = [DOCKERFILE, *ROOT.glob("helm/**/*.yaml"), *ROOT.glob("helm/**/*.tpl"), *ROOT.glob("scripts/*.sh")]
    configuring = {p.relative_to(ROOT).as_posix() for p in candidates if setting.search(p.read_text())}
    assert configuring <= {"helm/neo4j-values.yaml"}, configuring


@pytest.mark.parametrize("key", TELEMETRY_OFF)
def test_launcher_turns_telemetry_off(key: str) -> None:
    assert launcher_config().get(key) == "false", f"{LAUNCHER.name} no longer sets {key}=false"


def test_launcher_sets_no_enterprise_only_browser_key() -> None:
    assert ENTERPRISE_ONLY not in LAUNCHER.read_text().split("public static void main")[1], (
        f"{ENTERPRISE_ONLY} makes Neo4j Community 5.26 refuse to start (strict config validation)"
    )


def test_launcher_sends_browser_a_closed_policy() -> None:
    source = LAUNCHER.read_text()
    assert re.search(rf'cfg\.put\("{re.escape(CSP_KEY)}",\s*browserCsp\(hosts\)\)', source), f"{CSP_KEY} is not set"
    assert re.search(rf'cfg\.put\("{re.escape(ALLOWLIST_KEY)}",\s*hosts\)', source), "the policy and allow-list differ"
    policy = expected_policy(java_constant("BROWSER_CSP"), java_constant("BROWSER_ALLOWLIST"))
    assert_closed_policy(policy, LAUNCHER.name)
    assert "127.0.0.1:*" in directives(policy)["connect-src"]  # where `kopa serve` serves the style and the guide


def test_helm_neo4j_values_turn_telemetry_off() -> None:
    values = yaml.safe_load(HELM_NEO4J.read_text())
    config = {k: str(v) for k, v in values["config"].items()}
    for key in TELEMETRY_OFF:
        assert config.get(key) == "false", f"{HELM_NEO4J.name} no longer sets {key}: false"
    if values.get("neo4j", {}).get("edition") == "enterprise":
        assert config.get(ENTERPRISE_ONLY) == "false", f"an Enterprise Neo4j needs {ENTERPRISE_ONLY}: false"


def test_helm_neo4j_values_send_browser_a_closed_policy() -> None:
    config = yaml.safe_load(HELM_NEO4J.read_text())["config"]
    policy = config.get(CSP_KEY)
    assert policy, f"{HELM_NEO4J.name} sets no {CSP_KEY}: Neo4j's default lets Browser reach Segment and Sentry"
    assert_closed_policy(policy, HELM_NEO4J.name)
    # the same policy as the launcher's for the chart's allow-list: every allow-listed host reachable, no other
    expected = expected_policy(java_constant("BROWSER_CSP"), config[ALLOWLIST_KEY])
    assert " ".join(policy.split()) == expected, f"keep {CSP_KEY} in step with {ALLOWLIST_KEY}: {expected}"


def test_images_and_training_keep_libraries_quiet() -> None:
    dockerfile = DOCKERFILE.read_text()
    app_stage = dockerfile.split("AS app", 1)[1].split("FROM ", 1)[0]
    for key, value in LIBRARY_ENV.items():
        assert re.search(rf"^\s*{key}={value}\b", app_stage, re.M), f"the image's app stage no longer sets {key}"
    tree = ast.parse(TRAINING_RUN.read_text())
    offline = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "OFFLINE_ENV" for t in node.targets)
    )
    assert LIBRARY_ENV.items() <= offline.items(), offline
    assert offline.get("HF_HUB_OFFLINE") == "1"
    exports = " ".join(line for line in EXPERIMENT.read_text().splitlines() if line.startswith("export "))
    for key, value in LIBRARY_ENV.items():
        assert f"{key}={value}" in exports, f"scripts/experiment.sh (vllm serve) no longer exports {key}"


# ---- the running server (scripts/services.sh start) ---------------------------------------------------------------


def test_running_neo4j_reports_telemetry_off(neo4j_uri: str) -> None:
    from neo4j import GraphDatabase

    with GraphDatabase.driver(neo4j_uri, auth=None) as driver, driver.session(database="system") as session:
        settings = {
            r["name"]: r["value"]
            for r in session.run(
                "SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value",
                names=[*TELEMETRY_OFF, CSP_KEY],
            )
        }
        client = {r["name"]: r["value"] for r in session.run("CALL dbms.clientConfig()")}  # what Browser reads
    hint = "; restart it to pick up the launcher's settings (scripts/services.sh stop, then start)"
    for key in TELEMETRY_OFF:
        assert settings.get(key) == "false", f"the running Neo4j has {key}={settings.get(key)}{hint}"
    assert client.get("client.allow_telemetry") == "false", client
    assert_closed_policy(settings.get(CSP_KEY, ""), "the running Neo4j" + hint)


def test_running_browser_serves_a_closed_policy() -> None:
    browser_url = need("KOPA_TEST_NEO4J_BROWSER_URL", "Neo4j Browser")
    response = httpx.get(browser_url, timeout=10)
    assert response.status_code == 200, response.status_code
    assert "Neo4j" in response.text
    assert_closed_policy(response.headers.get("content-security-policy", ""), f"{browser_url} (restart Neo4j)")
