"""An optional paraphrase of a request through an on-premise OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp),
configured with KOPA_PARAPHRASE_URL; never required and never a hosted model by default."""

from __future__ import annotations

import httpx

from synthesis.korean import fmt_value as fmt_value
from synthesis.korean import has_batchim as has_batchim
from synthesis.korean import josa as josa
from synthesis.korean import verb as verb


def paraphrase(text: str, url: str, *, must_keep: list[str], timeout: float = 15.0) -> str:
    """Ask an on-premise OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp) for a natural rewording.

    Falls back to the deterministic text when the endpoint fails or drops a value the request must carry."""
    body = {
        "model": "local",
        "temperature": 0.7,
        "max_tokens": 256,
        "messages": [
            {
                "role": "system",
                "content": "다음 요청을 같은 뜻의 자연스러운 한국어 한두 문장으로 바꿔 쓰세요. "
                "숫자, 코드, 이름 같은 값은 그대로 두고 바꾼 문장만 답하세요.",
            },
            {"role": "user", "content": text},
        ],
    }
    try:
        resp = httpx.post(url.rstrip("/") + "/v1/chat/completions", json=body, timeout=timeout)
        resp.raise_for_status()
        out = str(resp.json()["choices"][0]["message"]["content"]).strip()
    except (httpx.HTTPError, KeyError, IndexError, ValueError):
        return text
    if not out or any(v and v not in out for v in must_keep):
        return text
    return out
