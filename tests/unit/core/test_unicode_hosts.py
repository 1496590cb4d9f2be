"""Host names with Unicode full stops (。 ． ｡) are the ASCII host for the allow-list, the overrides and egress
(core/settings.py normalise_host, core/egress.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.egress import EgressPolicy
from core.errors import DisallowedHost
from core.settings import Settings, canonical_base, find_override, normalise_host, parse_overrides
from graph.embedded_store import EmbeddedStore
from graph.registry import register
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from tests.support.helpers import Recorder, first_tool_outcome

DOCS = shipped_documents()

DOTS = ["\u3002", "\uff0e", "\uff61"]  # 。 ． ｡


def _forms(host: str, dot: str) -> list[str]:
    return [host + dot, host.replace(".", dot), host.replace(".", dot) + dot, host.upper().replace(".", dot)]


@pytest.mark.parametrize("dot", DOTS)
def test_unicode_full_stops_are_the_ascii_host_for_overrides(dot: str) -> None:
    host = "apis.data.go.kr"
    overrides = parse_overrides(f"{host}=http://h:1,https://api.odcloud.kr/api/1=http://b:1")
    for form in _forms(host, dot):
        assert normalise_host(form) == host, form
        assert canonical_base(f"https://{form}/1360000/x/") == f"https://{host}/1360000/x"
        found = find_override(overrides, f"https://{form}/1360000/x", None)
        assert found is not None and found.target == "http://h:1", (form, found)
    for form in _forms("api.odcloud.kr", dot):
        found = find_override(overrides, f"https://{form}/api/1/op", None)
        assert found is not None and found.target == "http://b:1", (form, found)
    # written in the overrides themselves: the same keys (and the same key twice is refused)
    for form in _forms(host, dot):
        (one,) = parse_overrides(f"{form}=http://h:1")
        assert one.kind == "host" and one.key == host, (form, one)
        found = find_override([one], f"https://{host}/x", None)
        assert found is not None
        (base,) = parse_overrides(f"https://{form}/1360000=http://h:1")
        assert base.key == f"https://{host}/1360000"
        with pytest.raises(ValidationError, match="named twice"):
            Settings(upstream_overrides=f"{host}=http://a:1,{form}=http://b:1")


@pytest.mark.parametrize("dot", DOTS)
def test_unicode_full_stops_are_the_ascii_host_for_the_allow_list(dot: str) -> None:
    host = "open.example.go.kr"
    for form in _forms(host, dot):
        settings = Settings(allowed_hosts=[form], use_default_hosts=False)
        assert settings.allowed_hosts == [host], form
        policy = EgressPolicy.from_settings(settings)
        assert policy.check_url(f"https://{host}/x").host == host
        assert EgressPolicy([form]).check_url(f"https://{host}/x").host == host  # entries given in code too
        for url_form in _forms(host, dot):
            assert policy.check_url(f"https://{url_form}/x").host == host, url_form
            assert EgressPolicy([host]).check_url(f"https://{url_form}/x").host == host, url_form
        with pytest.raises(DisallowedHost):
            policy.check_url(f"https://evil{dot}example/x")
    wildcard = EgressPolicy([f"*{dot}data{dot}example{dot}kr{dot}"])
    assert wildcard.check_url(f"https://a{dot}data{dot}example{dot}kr{dot}/").host == "a.data.example.kr"
    assert wildcard.check_url("https://a.data.example.kr/").host == "a.data.example.kr"
    with pytest.raises(DisallowedHost):
        wildcard.check_url(f"https://data{dot}example{dot}kr/")


@pytest.mark.parametrize("dot", DOTS)
def test_a_server_spelled_with_unicode_full_stops_hits_the_override(dot: str, tmp_path: Path) -> None:
    settings, sandbox = sandbox_mode(Settings())
    doc = copy.deepcopy(DOCS["StanReginCd"])
    doc["servers"] = [{"url": doc["servers"][0]["url"].replace("apis.data.go.kr", f"apis{dot}data{dot}go{dot}kr{dot}")}]
    store = EmbeddedStore(tmp_path / "dot.sqlite3")
    result = register(store, settings, doc)
    recorder = Recorder(sandbox)

    assert first_tool_outcome(settings, store, result.api, recorder, {"locatadd_nm": "서울특별시"}) in ("ok", "empty")
    assert recorder.urls and not any("data.go.kr" in seen for seen in recorder.urls), recorder.urls
    store.close()
