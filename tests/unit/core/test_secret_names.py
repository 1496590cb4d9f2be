"""The names of secrets a registration may read (core/secret_names.py): the default allow-list is a namespace no
other software uses (`KOPA_APIKEY_*`, `*_SERVICE_KEY`, plus KOPA_VERIFY__KEY_SECRET), matched case-sensitively, as
the variable is read; other systems' credentials (model hosts, clouds, CI, workflow engines, the BFCL run's key) are
refused under any list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from core.errors import InvalidInput
from core.secret_names import DEFAULT_SECRET_NAMES
from core.settings import Settings
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.registry import register
from sandbox.catalog import shipped_documents

ROOT = Path(__file__).resolve().parents[3]
DOCS = shipped_documents()

#: Credentials of other systems that a machine running KOPA EDGE may well hold: none is an API key a registration
#: may read, under the default policy.
OTHER_SYSTEMS = [
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "VERTEXAI_API_KEY",
    "VLLM_API_KEY",
    "AIRFLOW__CORE__FERNET_KEY",
    "AIRFLOW__WEBSERVER__SECRET_KEY",
    "KOPA_BFCL_API_KEY",
    "KOPA_BFCL_SERVICE_KEY",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HUGGINGFACE_API_KEY",
    "COHERE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "TOGETHER_API_KEY",
    "OPENROUTER_API_KEY",
    "WANDB_API_KEY",
    "LANGSMITH_API_KEY",
    "PINECONE_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN",
    "AZURE_CLIENT_SECRET",
    "GCP_SERVICE_KEY",
    "SUPABASE_SERVICE_KEY",
    "FIREBASE_SERVICE_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "DOCKER_PASSWORD",
    "NPM_TOKEN",
    "PYPI_API_TOKEN",
    "TWINE_PASSWORD",
    "STRIPE_SECRET_KEY",
    "STRIPE_SERVICE_KEY",
    "SENDGRID_API_KEY",
    "TWILIO_AUTH_TOKEN",
    "SLACK_BOT_TOKEN",
    "DATADOG_API_KEY",
    "SENTRY_AUTH_TOKEN",
    "CLOUDFLARE_API_KEY",
    "MINIO_SECRET_KEY",
    "VAULT_TOKEN",
    "SECRET_KEY",
    "DJANGO_SECRET_KEY",
    "JWT_SIGNING_KEY",
    "ENCRYPTION_KEY",
    "MASTER_KEY",
    "SSH_PRIVATE_KEY",
    "KOPA_BOOTSTRAP_TOKEN",
    "KOPA_SANDBOX__ADMIN_TOKEN",
    "KOPA_NEO4J__PASSWORD",
    "KOPA_VERIFY__KEY_SECRET",
    "KOPA_TEST_BFCL_KEY",
    # lower-case spellings: another variable than the one the allow-list names, or still a credential
    "gemini_api_key",
    "openai_api_key",
    "hf_token",
    "aws_secret_access_key",
    "corp_service_key",
    "Corp_Service_Key",
    "kopa_service_key",
    "kopa_apikey_corp",
]
#: The lower-case spellings of names that are allowed as spelled: refused by the default (case-sensitive) list,
#: but an operator's "*" takes them.
ALLOWED_WHEN_SPELLED = {"corp_service_key", "Corp_Service_Key"}


def test_no_other_systems_credential_is_accepted_by_the_default_policy() -> None:
    settings = Settings()
    assert settings.secret_names == list(DEFAULT_SECRET_NAMES)
    assert len(OTHER_SYSTEMS) >= 30
    accepted = [n for n in OTHER_SYSTEMS if settings.secret_refusal(n) is None]
    assert accepted == [], accepted
    # the refusals of credential families hold whatever the operator lists
    loose = Settings(secret_names=["*"])
    assert {n for n in OTHER_SYSTEMS if loose.secret_refusal(n) is None} == ALLOWED_WHEN_SPELLED
    # a lower-case spelling is told what it was matched against
    assert "did you mean CORP_SERVICE_KEY" in (settings.secret_refusal("corp_service_key") or "")


def test_the_readme_example_and_the_project_namespace_are_accepted() -> None:
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"--secret-name (\S+)", readme)) | set(re.findall(r"secret_name=(\w+)", readme))
    exported = set(re.findall(r"export ([A-Z_]*SERVICE_KEY)=", readme))
    assert named == {"CORP_SERVICE_KEY"} and named <= exported, (named, exported)
    settings = Settings()
    for name in [*named, "KOPA_SERVICE_KEY", "KOPA_APIKEY_JUSO", "DATA_GO_KR_SERVICE_KEY", "LIBRARY_SERVICE_KEY"]:
        assert settings.secret_refusal(name) is None, (name, settings.secret_refusal(name))
    # KOPA_ names outside KOPA_APIKEY_ are the project's own, even when they end like a key
    assert "namespace" in (settings.secret_refusal("KOPA_JUSO_SERVICE_KEY") or "")
    assert "namespace" in (Settings(secret_names=["*"]).secret_refusal("KOPA_SOMETHING_KEY") or "")
    # the key variables the chart gives the processes are names a registration may use
    for values in (ROOT / "helm/kopa-edge").rglob("*values.yaml"):
        items = ((yaml.safe_load(values.read_text()) or {}).get("secrets") or {}).get("serviceKeys") or {}
        for item in items.get("items") or []:
            assert settings.secret_refusal(item["env"]) is None, (values, item)


def test_registration_reads_the_variable_as_spelled(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    for name in ("corp_service_key", "CORP_KEY", "GEMINI_API_KEY", "VLLM_API_KEY"):
        with pytest.raises(InvalidInput, match="secret name refused"):
            register(store, Settings(), DOCS["StanReginCd"], RegistrationMeta(auth=AuthConfig(secret=name)))
    assert store.list_apis()[1] == 0
    ok = register(store, Settings(), DOCS["StanReginCd"], RegistrationMeta(auth=AuthConfig(secret="CORP_SERVICE_KEY")))
    assert ok.api.auth.secret == "CORP_SERVICE_KEY"
    # an operator's exact list is exact too
    exact = Settings(secret_names=["CORP_KEY"])
    assert exact.secret_refusal("CORP_KEY") is None and exact.secret_refusal("corp_key")
    store.close()
