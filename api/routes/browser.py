"""Neo4j Browser helpers served by the API: the style sheet, saved queries and a guide (CORS-enabled so the
Browser can fetch them with `:style <url>` and `:play <url>`)."""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

router = APIRouter(prefix="/browser", tags=["operations"])
CORS = {"Access-Control-Allow-Origin": "*"}


def _asset(name: str) -> str:
    return resources.files("graph").joinpath("browser", name).read_text(encoding="utf-8")


@router.get("", summary="Where Neo4j Browser is, and how to style it")
def browser_info(request: Request) -> dict[str, str]:
    settings = request.app.state.kopa.settings
    base = str(request.base_url).rstrip("/")
    return {"browser": settings.neo4j.browser_url, "style": f":style {base}/browser/kopa.grass",
            "guide": f":play {base}/browser/guide.html", "saved_queries": f"{base}/browser/queries.cypher"}


@router.get("/kopa.grass", response_class=PlainTextResponse, summary="GraSS style sheet")
def grass() -> Response:
    return PlainTextResponse(_asset("kopa.grass"), headers=CORS)


@router.get("/queries.cypher", response_class=PlainTextResponse, summary="Saved queries (drag onto the Browser)")
def saved_queries() -> Response:
    return PlainTextResponse(_asset("queries.cypher"), headers=CORS)


@router.get("/guide.html", response_class=HTMLResponse, summary="A Browser guide (:play)")
def guide() -> Response:
    return HTMLResponse(_asset("guide.html"), headers=CORS)
