"""The Browser helper routes without a browser: the CORS preflight Chromium sends before `:style`/`:play`, the
favourites zip (one .cypher per saved query, as Neo4j Browser imports a dropped zip), and the style's captions."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

from fastapi.testclient import TestClient

from api.app import create_app
from api.routes.browser import saved_queries
from core.settings import Settings

PREFLIGHT = {
    "Origin": "http://127.0.0.1:7474",
    "Access-Control-Request-Method": "GET",
    "Access-Control-Request-Headers": "content-type,x-ajax-browser-auth,x-stream",
}


def client(tmp_path: Path) -> TestClient:
    return TestClient(create_app(Settings(store="embedded", data_dir=tmp_path)))


def test_every_helper_answers_the_preflight_the_browser_sends(tmp_path: Path) -> None:
    with client(tmp_path) as c:
        for name in ("guide.html", "kopa.grass", "queries.cypher", "favorites.zip"):
            r = c.options(f"/browser/{name}", headers=PREFLIGHT)
            assert r.status_code == 204, (name, r.status_code, r.text)
            assert r.headers["access-control-allow-origin"] == "*"
            assert "GET" in r.headers["access-control-allow-methods"]
            allowed = {h.strip().lower() for h in r.headers["access-control-allow-headers"].split(",")}
            assert {"content-type", "x-ajax-browser-auth", "x-stream"} <= allowed
            got = c.get(f"/browser/{name}", headers={"Origin": PREFLIGHT["Origin"]})
            assert got.status_code == 200 and got.headers["access-control-allow-origin"] == "*"
        odd = c.options(
            "/browser/kopa.grass", headers={**PREFLIGHT, "Access-Control-Request-Headers": "x-new, bad header"}
        )
        assert "x-new" in odd.headers["access-control-allow-headers"]
        assert "bad header" not in odd.headers["access-control-allow-headers"]


def test_favourites_zip_has_one_file_per_saved_query(tmp_path: Path) -> None:
    queries = saved_queries()
    assert len(queries) >= 8
    with client(tmp_path) as c:
        r = c.get("/browser/favorites.zip")
    assert r.headers["content-type"] == "application/zip"
    zf = zipfile.ZipFile(io.BytesIO(r.content))
    names = zf.namelist()
    assert len(names) == len(queries) and all(n.startswith("KOPA EDGE/") and n.endswith(".cypher") for n in names)
    first = zf.read(sorted(names)[0]).decode()
    used: set[str] = set()
    for name, query in zip(sorted(names), queries, strict=True):
        text = zf.read(name).decode()
        assert text == query and text.startswith("// KOPA ")
        used |= set(re.findall(r"\$(\w+)", "\n".join(ln for ln in text.splitlines() if not ln.startswith("//"))))
    # every parameter a favourite uses is set by the first one, with a default read from the graph
    assert used == {"tool", "api"}
    assert all(f":param {p} => head([" in first for p in used), first


def test_style_captions_verified_links_with_transform_and_evidence(tmp_path: Path) -> None:
    with client(tmp_path) as c:
        grass = c.get("/browser/kopa.grass").text
    verified = re.search(r"relationship\.VERIFIED \{(.*?)\n\}", grass, re.S)
    assert verified and 'caption: "{transform} · {evidence}";' in verified.group(1)
    for label in ("Api", "Tool", "Param", "Field"):
        assert f"node.{label} {{" in grass


def test_the_links_never_echo_a_foreign_host_header(tmp_path: Path) -> None:
    with client(tmp_path) as c:
        local = c.get("/browser").json()
        assert local["style"] == ":style http://testserver/browser/kopa.grass"
        foreign = c.get("/browser", headers={"Host": "evil.example"}).json()
        assert "evil.example" not in json.dumps(foreign) and "<KOPA_PUBLIC_URL>" in foreign["style"]
    app = create_app(Settings(store="embedded", data_dir=tmp_path, public_url="https://kopa.example.go.kr/"))
    with TestClient(app) as c:
        got = c.get("/browser", headers={"Host": "evil.example"}).json()
        assert got["guide"] == ":play https://kopa.example.go.kr/browser/guide.html"
