"""Egress policy: the one place that decides whether a URL may be called upstream (no server-side request forgery).

A URL passes when
* its scheme is http or https and it carries no credentials;
* its host (`core.settings.normalise_host`: Unicode full stops as ".", lower case, trailing dot removed, IDNA; the
  same form the upstream overrides match on) is on the allow-list: exact names, or "*.domain" for every
  subdomain of domain (see `Settings.allowed_host_patterns`), or host:port is a named local upstream (an entry of
  `Settings.local_upstreams` names that one upstream for both checks, which is what production asks for
  instead of a loopback or unqualified allow-list entry);
* every address the host resolves to is public, unless host:port is an explicitly named local upstream
  (`Settings.local_upstreams`, or the target of an upstream override, which the operator names explicitly).

Registration checks documents with `check_url(..., resolve=True)`; the executor checks every request with
`check_url` and then connects only to an address that `pinned_address` checked (no DNS rebinding between the check
and the connection).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from core.errors import DisallowedHost
from core.settings import Settings, ascii_dots, normalise_host

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def internal_address(ip: IPAddress) -> bool:
    """Loopback, private, link-local (cloud metadata), shared, reserved, multicast or unspecified, including IPv4
    embedded in IPv6 (mapped, 6to4, Teredo, NAT64)."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # ::ffff:a.b.c.d is the IPv4 address itself
            return internal_address(ip.ipv4_mapped)
        embedded: list[ipaddress.IPv4Address] = []
        if ip.sixtofour is not None:
            embedded.append(ip.sixtofour)
        if ip.teredo is not None:
            embedded.extend(ip.teredo)
        if ip in _NAT64:
            embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if any(internal_address(e) for e in embedded):
            return True
    return bool(
        not ip.is_global
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_private
    )


def parse_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int


def _endpoint(entry: str) -> tuple[str, int | None]:
    """'host', 'host:port', '[v6]:port' or a URL -> (host, port or None for any port)."""
    text = entry.strip()
    if "://" in text:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        return normalise_host(parts.hostname or ""), parts.port or _DEFAULT_PORTS.get(scheme)
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return normalise_host(host), int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return normalise_host(host), int(port) if port.isdigit() else None
    return normalise_host(text), None


class EgressPolicy:
    """Built from settings once per executor/registration; cheap to query."""

    def __init__(self, allowed: Iterable[str], local: Iterable[str] = (), *, resolve_timeout_s: float = 3.0) -> None:
        self.exact: set[str] = set()
        self.suffixes: list[str] = []
        for entry in allowed:
            name = ascii_dots(entry).strip().lower().rstrip(".")
            if name.startswith("*."):
                self.suffixes.append("." + normalise_host(name[2:]))  # ".domain"
            elif name:
                self.exact.add(normalise_host(name.strip("[]")))
        self.local: set[tuple[str, int | None]] = {_endpoint(e) for e in local if e.strip()}
        self.resolve_timeout_s = resolve_timeout_s

    @classmethod
    def from_settings(cls, settings: Settings) -> EgressPolicy:
        overrides = list(settings.override_map().values())
        return cls(
            [*settings.allowed_host_patterns(), *(_endpoint(u)[0] for u in overrides)],
            [*settings.local_upstreams, *overrides],
            resolve_timeout_s=min(5.0, settings.verify.timeout_s),
        )

    def allowed_name(self, host: str) -> bool:
        return host in self.exact or any(host.endswith(s) and len(host) > len(s) for s in self.suffixes)

    def local_allowed(self, host: str, port: int) -> bool:
        return (host, port) in self.local or (host, None) in self.local

    def target(self, url: str | httpx.URL) -> Target:
        """The scheme, host and port the URL really addresses (parsed the way httpx will), checked by name."""
        try:
            parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
            scheme, raw_host, raw_port = parsed.scheme.lower(), parsed.host, parsed.port
        except (httpx.InvalidURL, TypeError, ValueError) as exc:  # IDNA errors are ValueErrors too
            raise DisallowedHost(f"{str(url)[:200]!r} is not a valid URL") from exc
        if scheme not in _DEFAULT_PORTS:
            raise DisallowedHost(
                f"{str(url)[:200]!r}: only http and https URLs may be called (got {scheme or 'none'!r})"
            )
        if parsed.userinfo:
            raise DisallowedHost("server URLs must not carry credentials")
        host = normalise_host(raw_host)
        port = raw_port or _DEFAULT_PORTS[scheme]
        if not self.allowed_name(host) and not self.local_allowed(host, port):
            ip = parse_ip(host)
            kind = (
                "an internal address"
                if ip is not None and internal_address(ip)
                else ("an address" if ip is not None else "a host")
            )
            spelled = f"[{host}]" if ":" in host else host
            raise DisallowedHost(
                f"{host} is {kind} outside the allow-list (add it to KOPA_ALLOWED_HOSTS, or name an "
                f"upstream on this network in KOPA_LOCAL_UPSTREAMS as {spelled}:{port})"
            )
        return Target(scheme, host, port)

    def check_addresses(self, target: Target, addresses: Iterable[str]) -> list[str]:
        """The addresses that may be connected to; raises when any is internal and host:port is not a named
        local upstream (all or nothing: a name with one internal address is refused)."""
        found = list(dict.fromkeys(addresses))
        if self.local_allowed(target.host, target.port):
            return found
        for a in found:
            ip = parse_ip(a.split("%", 1)[0])
            if ip is None or internal_address(ip):
                raise DisallowedHost(
                    f"{target.host} resolves to an internal address ({a}); name it in "
                    f"KOPA_LOCAL_UPSTREAMS as {target.host}:{target.port} if it really is an upstream"
                )
        return found

    def resolve(self, target: Target) -> list[str]:
        ip = parse_ip(target.host)
        if ip is not None:
            return [str(ip)]
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        return [str(info[4][0]) for info in infos]

    def check_url(self, url: str | httpx.URL, *, resolve: bool = False) -> Target:
        """Check by name; with `resolve`, also the addresses the name has now (a name that does not resolve is
        accepted here: nothing can be reached through it, and every call checks again before connecting)."""
        target = self.target(url)
        if resolve:
            try:
                addresses = self.resolve(target)
            except (OSError, UnicodeError):
                return target
            self.check_addresses(target, addresses)
        return target

    async def pinned_address(self, target: Target) -> str:
        """Resolve (bounded), check, and return the one address to connect to."""
        ip = parse_ip(target.host)
        if ip is not None:
            return self.check_addresses(target, [str(ip)])[0]
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(
                loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM), self.resolve_timeout_s
            )
        except (OSError, TimeoutError, UnicodeError) as exc:
            raise httpx.ConnectError(f"{target.host} does not resolve ({type(exc).__name__})") from exc
        addresses = self.check_addresses(target, [str(info[4][0]) for info in infos])
        if not addresses:
            raise httpx.ConnectError(f"{target.host} has no address")
        return addresses[0]


__all__ = ["EgressPolicy", "Target", "internal_address", "normalise_host", "parse_ip"]


_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>),;]+", re.IGNORECASE)
_HOST_PORT = re.compile(
    r"(?<![\w.:-])(?:\[[0-9a-f:.]+\]|\d{1,3}(?:\.\d{1,3}){3}|[a-z0-9_.-]*[a-z][a-z0-9_.-]*)"
    r":\d{1,5}\b",
    re.IGNORECASE,
)
_IP = re.compile(
    r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.])|\[[0-9a-f:.]+\]|(?<![\w:])[0-9a-f]{0,4}(?::[0-9a-f]{1,4})*::"
    r"(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?(?![\w:])",
    re.IGNORECASE,
)

_PAIR = re.compile(r"\(\s*'<address>'\s*,\s*\d{1,5}\s*(?:,[^()]*)?\)")


def hide_addresses(text: str) -> str:
    """`text` with every URL, host:port and IP address replaced by "<address>": what an error about our own
    dependencies (Neo4j's Bolt address, Redis's host:port) may say in a response body. The full text belongs in
    the server log only."""
    text = _URL.sub("<address>", text)
    text = _HOST_PORT.sub("<address>", text)
    text = _IP.sub("<address>", text)
    return _PAIR.sub("<address>", text)  # ('<address>', 7687), as socket errors write them
