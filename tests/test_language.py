"""Korean wording: particles, value formats, and the optional on-premise paraphraser (a local fake server)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from synthesis.language import fmt_value, has_batchim, josa, paraphrase, verb


def test_particles_and_forms() -> None:
    assert josa("조회", "을", "를") == "조회를" and josa("확인", "을", "를") == "확인을"
    assert has_batchim("2026년") and not has_batchim("서울시 2") and has_batchim("3")
    assert verb("근처 약국 찾기", "req") == "근처 약국 찾아 줘" and verb("날씨 확인", "then") == "날씨 확인한 다음"
    assert fmt_value("base_date", "20261015") == "2026년 10월 15일" and fmt_value("DEAL_YMD", "202609") == "2026년 9월"


class Fake(BaseHTTPRequestHandler):
    reply = ""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][-1]["content"]
        out = json.dumps({"choices": [{"message": {"content": Fake.reply.format(text=text)}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def llm() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_paraphrase_keeps_values_or_falls_back(llm: str) -> None:
    Fake.reply = "혹시 {text}"
    assert paraphrase("종로구 날씨 알려줘", llm, must_keep=["종로구"]) == "혹시 종로구 날씨 알려줘"
    Fake.reply = "날씨를 알려주세요"  # dropped the value: keep the deterministic text
    assert paraphrase("종로구 날씨 알려줘", llm, must_keep=["종로구"]) == "종로구 날씨 알려줘"
    assert paraphrase("그대로", "http://127.0.0.1:9", must_keep=[]) == "그대로"
