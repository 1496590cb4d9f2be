"""The `gpu` extra resolves to a vLLM that the installed trl accepts, with the torch that vLLM was built against.

pip resolves the extra with a dry run (metadata only, nothing installed) against the package registry, as a user on
a GPU machine would with `pip install -e ".[train,gpu]"`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _trl_vllm_range() -> tuple[Version, Version]:
    import trl

    source = (Path(trl.__file__).parent / "import_utils.py").read_text(encoding="utf-8")
    m = re.search(r'Version\("([0-9.]+)"\)\s*<=\s*_vllm_base_version\s*<=\s*Version\("([0-9.]+)"\)', source)
    assert m, "trl no longer states its accepted vLLM range in import_utils.py: update this test"
    return Version(m.group(1)), Version(m.group(2))


@pytest.mark.slow
def test_gpu_extra_resolves_to_a_vllm_trl_accepts(tmp_path: Path) -> None:
    low, high = _trl_vllm_range()
    report = tmp_path / "report.json"
    pins = _extra_requirements("gpu")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--ignore-installed",
            "--report",
            str(report),
            *pins,
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"the gpu extra does not resolve: {proc.stderr[-3000:]}"
    chosen = {
        i["metadata"]["name"].lower(): Version(i["metadata"]["version"])
        for i in json.loads(report.read_text())["install"]
    }
    assert "vllm" in chosen and "torch" in chosen
    assert low <= Version(chosen["vllm"].base_version) <= high, (chosen["vllm"], low, high)
    torch_pin = next(r.split("==")[1] for r in pins if r.startswith("torch=="))
    assert chosen["torch"] == Version(torch_pin), "vLLM would replace the extra's torch: pin the pair vLLM needs"


def _extra_requirements(name: str) -> list[str]:
    import tomllib

    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    reqs: list[str] = doc["project"]["optional-dependencies"][name]
    return reqs
