"""Dependencies shared by the routes: the store, the settings, and role checks."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from api.security import authenticate, principal, require
from core.settings import Settings
from graph.models import Role
from graph.store import GraphStore


def get_store(request: Request) -> GraphStore:
    store: GraphStore = request.app.state.kopa.store
    return store


def get_app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.kopa.settings
    return settings


StoreDep = Annotated[GraphStore, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]


def _role(request: Request, authorization: Annotated[str | None, Header()] = None) -> Role:
    return authenticate(request.app.state.kopa.store, request.app.state.kopa.settings, authorization)


def reader(role: Annotated[Role, Depends(_role)]) -> Role:
    require("reader", role)
    return role


def admin(role: Annotated[Role, Depends(_role)]) -> Role:
    require("admin", role)
    return role


ReaderDep = Annotated[Role, Depends(reader)]


def team(request: Request, authorization: Annotated[str | None, Header()] = None) -> str:
    role, name = principal(request.app.state.kopa.store, request.app.state.kopa.settings, authorization)
    require("reader", role)
    return name


TeamDep = Annotated[str, Depends(team)]
AdminDep = Annotated[Role, Depends(admin)]
