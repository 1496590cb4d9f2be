"""Secrets' names and strength: which values may guard a production process (`weak_token`), and which variable names
a registration may give its key and which it may not (other systems' credentials, by family prefix and by word, and
the project's own KOPA_ namespace; read by `Settings.secret_refusal`)."""

from __future__ import annotations

from collections import Counter

#: Values that ship in the code or the docs: refused as secrets when KOPA_ENV=production.
DEFAULT_SECRETS = {"sandbox-admin", "change-me", "changeme", "boot", "admin", "secret", "password", ""}

#: Variables that never hold an API's key, whatever KOPA_SECRET_NAMES says: the credentials of clouds, CI, package
#: registries, model hosts, databases and the like (their families by prefix), and words that name other secrets
#: (a public-data service key is an API key, never a password, token or private key). The project's own settings
#: (KOPA_<setting>, KOPA_<section>__...) are refused too (`Settings.secret_refusal`).
CREDENTIAL_PREFIXES = (
    "AWS_",
    "AMAZON_",
    "AZURE_",
    "ARM_",
    "GOOGLE_",
    "GCP_",
    "GCLOUD_",
    "CLOUDSDK_",
    "GITHUB_",
    "GH_",
    "GITLAB_",
    "CI_",
    "BITBUCKET_",
    "DOCKER_",
    "REGISTRY_",
    "NPM_",
    "PYPI_",
    "TWINE_",
    "PIP_",
    "UV_",
    "POETRY_",
    "CONDA_",
    "OPENAI_",
    "ANTHROPIC_",
    "HF_",
    "HUGGING",
    "WANDB_",
    "COMET_",
    "NEPTUNE_",
    "DD_",
    "DATADOG_",
    "SENTRY_",
    "SLACK_",
    "STRIPE_",
    "TWILIO_",
    "SENDGRID_",
    "MAILGUN_",
    "KUBE",
    "K8S_",
    "HELM_",
    "VAULT_",
    "CONSUL_",
    "NOMAD_",
    "TF_",
    "TERRAFORM_",
    "NEO4J_",
    "REDIS_",
    "CELERY_",
    "DATABASE_",
    "DB_",
    "POSTGRES",
    "PGPASS",
    "MYSQL_",
    "MONGO",
    "SSH_",
    "GPG_",
    "GNUPG",
    "DIGITALOCEAN_",
    "HEROKU_",
    "VERCEL_",
    "NETLIFY_",
    "CLOUDFLARE_",
    "CF_",
    "ALIBABA_",
    "ALICLOUD_",
    "NCP_",
    "NAVER_CLOUD_",
    "KAKAO_CLOUD_",
    "OCI_",
    "IBM_",
    "JWT_",
    "DJANGO_",
    "FLASK_",
    "RAILS_",
    "APP_",
    # model hosts and serving, vector stores, workflow engines, mail, payment and observability vendors
    "GEMINI_",
    "VERTEX",
    "COHERE_",
    "MISTRAL_",
    "GROQ_",
    "TOGETHER_",
    "REPLICATE_",
    "DEEPSEEK_",
    "XAI_",
    "PERPLEXITY_",
    "OPENROUTER_",
    "FIREWORKS_",
    "OLLAMA_",
    "VLLM_",
    "TGI_",
    "TRITON_",
    "NVIDIA_",
    "NGC_",
    "LANGCHAIN_",
    "LANGSMITH_",
    "LANGFUSE_",
    "MLFLOW_",
    "PINECONE_",
    "QDRANT_",
    "WEAVIATE_",
    "MILVUS_",
    "ELASTIC",
    "OPENSEARCH_",
    "AIRFLOW_",
    "PREFECT_",
    "DAGSTER_",
    "KAFKA_",
    "RABBITMQ_",
    "AMQP_",
    "SMTP_",
    "MAILCHIMP_",
    "POSTMARK_",
    "RESEND_",
    "PAYPAL_",
    "BRAINTREE_",
    "PLAID_",
    "SHOPIFY_",
    "SUPABASE_",
    "FIREBASE_",
    "ALGOLIA_",
    "NEW_RELIC_",
    "NEWRELIC_",
    "GRAFANA_",
    "HONEYCOMB_",
    "OTEL_",
    "JENKINS_",
    "CIRCLECI_",
    "TRAVIS_",
    "BUILDKITE_",
    "CODECOV_",
    "SONAR",
    "SNYK_",
    "JFROG_",
    "ARTIFACTORY_",
    "NUGET_",
    "RUBYGEMS_",
    "CARGO_",
    "MAVEN_",
    "GRADLE_",
    "MINIO_",
    "S3_",
    "PULUMI_",
    "ANSIBLE_",
    "DOPPLER_",
    "INFISICAL_",
    "OKTA_",
    "AUTH0_",
    "KEYCLOAK_",
    "LDAP_",
    "SNOWFLAKE_",
    "DATABRICKS_",
    "TENCENT",
    "HUAWEI",
    "YANDEX_",
    "LINODE_",
    "VULTR_",
    "HETZNER_",
    "SCALEWAY_",
    "NGROK_",
    "TAILSCALE_",
    "TELEGRAM_",
    "DISCORD_",
    # KOPA EDGE's own variables that are not settings (the BFCL run's model key)
    "KOPA_BFCL_",
)
CREDENTIAL_WORDS = (
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "SECRET",
    "TOKEN",
    "PRIVATE",
    "PRIVKEY",
    "CREDENTIAL",
    "SESSION",
    "COOKIE",
    "SIGNING",
    "FERNET",
    "ENCRYPT",
    "MASTER_KEY",
    "ACCESS_KEY",
    "WEBHOOK",
)
#: The names a registration may use for its key when KOPA_SECRET_NAMES is unset, besides `verify.key_secret`
#: (KOPA_SERVICE_KEY): a namespace no other software uses. `KOPA_APIKEY_<API>` is the project's own; data.go.kr and
#: its peers call their key a service key (`serviceKey`), hence `<API>_SERVICE_KEY` (`CORP_SERVICE_KEY`). Matched
#: case-sensitively, as the variable is read.
DEFAULT_SECRET_NAMES = ("KOPA_APIKEY_*", "*_SERVICE_KEY")
#: The part of the KOPA_ namespace a registration may name (all other KOPA_ names are the project's own).
API_KEY_PREFIX = "KOPA_APIKEY_"


def weak_token(value: str) -> str | None:
    """Why `value` may not guard a production process (None when it may): a value that ships in the code or the
    docs, under 16 characters, or low in entropy (fewer than 8 distinct characters, one character making up more
    than half of it, or a shorter string repeated)."""
    if value.strip().lower() in DEFAULT_SECRETS:
        return "a default value"
    if len(value) < 16:
        return "a short value"
    counts = Counter(value)
    if len(counts) < 8:
        return f"a low-entropy value (only {len(counts)} distinct characters)"
    if max(counts.values()) * 2 > len(value):
        return "a low-entropy value (one character makes up more than half of it)"
    if (value + value).find(value, 1) < len(value):  # "abcdefghabcdefgh": a period shorter than the value
        return "a low-entropy value (a shorter string repeated)"
    return None
