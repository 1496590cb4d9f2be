"""Neo4j Browser helpers served by the API: the style sheet, the saved queries (as one text file and as a zip of
favourites) and a guide.

Neo4j Browser fetches `:style <url>` and `:play <url>` cross-origin with `Content-Type` and `X-Ajax-Browser-Auth`
headers, so the browser sends a CORS preflight (OPTIONS) first: every helper answers it, and every GET carries
`Access-Control-Allow-Origin: *` (the files are public, no credentials are involved). The Browser also checks the
host against its server's `browser.remote_content_hostname_whitelist` (see infra/neo4j and helm/neo4j-values.yaml).
"""

from __future__ import annotations

import io
import re
import zipfile
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

router = APIRouter(prefix="/browser", tags=["operations"])
CORS = {"Access-Control-Allow-Origin": "*"}
#: what the Browser's requests carry (neo4j-browser src/shared/services/remote.ts); any other requested header
#: that is a plain token is allowed too, so a newer Browser adding one keeps working
BROWSER_HEADERS = ("Content-Type", "X-Ajax-Browser-Auth", "X-Stream")
_TOKEN = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
ASSETS = ("kopa.grass", "queries.cypher", "favorites.zip", "guide.html")
#: folder the favourites land in when the zip is dropped onto the Browser
FAVORITES_FOLDER = "KOPA EDGE"


def _asset(name: str) -> str:
    return resources.files("graph").joinpath("browser", name).read_text(encoding="utf-8")


def saved_queries() -> list[str]:
    """The saved queries of graph/browser/queries.cypher, one favourite each: blocks separated by blank lines whose
    first line is a `// name` comment (the Browser names a favourite after its first line); comment-only blocks
    (the file's header) are left out."""
    blocks = re.split(r"\n\s*\n", _asset("queries.cypher").strip())
    return [
        b.strip() + "\n"
        for b in blocks
        if b.lstrip().startswith("//") and any(not ln.strip().startswith("//") for ln in b.splitlines())
    ]


def favorites_zip() -> bytes:
    """A zip the Browser imports as favourites when dropped onto it (one `.cypher` file per favourite; the folder
    inside the zip becomes a folder of favourites). Dropping one .cypher file makes one favourite of all of it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i, query in enumerate(saved_queries(), 1):
            title = query.splitlines()[0].lstrip("/").strip()
            slug = re.sub(r"[^A-Za-z0-9]+", "_", title).strip("_")[:60] or f"query_{i}"
            info = zipfile.ZipInfo(f"{FAVORITES_FOLDER}/{i:02d}_{slug}.cypher", date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, query)
    return buf.getvalue()


def _preflight(request: Request) -> Response:
    """The answer to a CORS preflight: any origin, GET, and the headers the Browser asks to send."""
    asked = [h.strip() for h in request.headers.get("access-control-request-headers", "").split(",") if h.strip()]
    allowed = list(BROWSER_HEADERS) + [
        h for h in asked if _TOKEN.match(h) and h.lower() not in {b.lower() for b in BROWSER_HEADERS}
    ]
    return Response(
        status_code=204,
        headers={
            **CORS,
            "Access-Control-Allow-Methods": "GET, OPTIONS",
            "Access-Control-Allow-Headers": ", ".join(allowed),
            "Access-Control-Max-Age": "600",
            "Allow": "GET, OPTIONS",
        },
    )


_LOOPBACK = ("localhost", "127.0.0.1", "[::1]", "testserver")


def _base(request: Request, public_url: str) -> str:
    """Where clients reach this server: the configured public URL, else the request's own address when its Host is
    a loopback name (never a Host header from elsewhere echoed back into the links handed out)."""
    if public_url:
        return public_url.rstrip("/")
    if (request.url.hostname or "") in _LOOPBACK or request.url.netloc.startswith(_LOOPBACK):
        return str(request.base_url).rstrip("/")
    return "<KOPA_PUBLIC_URL>"


@router.get("", summary="Where Neo4j Browser is, and how to style it")
def browser_info(request: Request) -> dict[str, str]:
    settings = request.app.state.kopa.settings
    base = _base(request, settings.public_url)
    return {
        "browser": settings.neo4j.browser_url,
        "style": f":style {base}/browser/kopa.grass",
        "guide": f":play {base}/browser/guide.html",
        "saved_queries": f"{base}/browser/queries.cypher",
        "favorites": f"{base}/browser/favorites.zip",
    }


@router.get("/kopa.grass", response_class=PlainTextResponse, summary="GraSS style sheet (:style URL)")
def grass() -> Response:
    return PlainTextResponse(_asset("kopa.grass"), headers=CORS)


@router.get("/queries.cypher", response_class=PlainTextResponse, summary="Saved queries, as text")
def queries_text() -> Response:
    return PlainTextResponse(_asset("queries.cypher"), headers=CORS)


@router.get(
    "/favorites.zip",
    summary="Saved queries as favourites (drop the zip onto the Browser)",
    responses={200: {"content": {"application/zip": {}}}},
)
def favorites() -> Response:
    return Response(
        favorites_zip(),
        media_type="application/zip",
        headers={**CORS, "Content-Disposition": 'attachment; filename="kopa-favorites.zip"'},
    )


@router.get("/guide.html", response_class=HTMLResponse, summary="A Browser guide (:play URL)")
def guide() -> Response:
    return HTMLResponse(_asset("guide.html"), headers=CORS)


for _name in ASSETS:
    router.add_api_route(
        f"/{_name}",
        _preflight,
        methods=["OPTIONS"],
        include_in_schema=False,
        status_code=204,
        name=f"preflight {_name}",
    )
