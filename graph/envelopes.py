"""Envelopes learnt, not listed: where the rows of a response are, read off the document's schema when it has one
and off the response itself when it has none or the declared path finds nothing.

Korean public APIs wrap their rows in many ways (`response.body.items.item`, `response.body.items` as an array,
`body.items`, odcloud `data`, `results.juso`, bare arrays, and providers' own `result/item`, `response/item`,
`result/data`). Rather than listing each provider, the rows are the list of flat records (or the one flat record
under a row-like name such as `item`) found nearest the root; header-like records (`header`, `meta`, `cmmMsgHeader`)
are never rows. A result code next to a message (the names of `graph.providers.CODE_NAMES` and `MSG_NAMES`, or an
`error` text) is read wherever it sits in the top three levels.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar

from graph import providers

#: Names under which a single record (an object, not a list) is a row: XML-to-JSON gives one `item` for one row.
ROW_NAMES = ("item", "items", "row", "rows", "data", "list", "record", "records", "juso", "result")
#: Names of records that describe the response, never rows.
HEADER_NAMES = {"header", "head", "meta", "cmmmsgheader", "common", "paging", "page", "pageinfo", "error"}
MAX_DEPTH = 5

Resolve = Callable[[Any], dict[str, Any]]


def _flat(record: Any) -> bool:
    """A record whose values are mostly scalars (a row), not a wrapper of other records."""
    if not isinstance(record, dict) or not record:
        return False
    scalars = sum(1 for v in record.values() if not isinstance(v, dict | list))
    return scalars >= max(1, len(record) // 2)


#: Names that hold rows and nothing else, so one record under them is a row even at the top (`{"code": "SUCCESS",
#: "count": 1, "list": {...}}`); `data` and `result` also wrap headers and single resources there.
LIST_NAMES = ("item", "items", "row", "rows", "list", "record", "records")


def _single_row_at(name: str, depth: int) -> bool:
    return name in ROW_NAMES and (depth > 0 or name in LIST_NAMES)


def detect_items(doc: Any) -> tuple[str, list[dict[str, Any]]] | None:
    """(items path, rows) read off a response: the shallowest list of flat records, or a flat record under a
    row-like name; None when the response holds no rows (an empty wrapper, a header only)."""
    if isinstance(doc, list):
        rows = [r for r in doc if isinstance(r, dict)]
        return ("[]", rows) if rows and any(_flat(r) for r in rows) else None
    best: tuple[int, str, list[dict[str, Any]]] | None = None

    def visit(node: Any, path: list[str], depth: int) -> None:
        nonlocal best
        if depth > MAX_DEPTH or not isinstance(node, dict):
            return
        for key, value in node.items():
            if str(key).lower() in HEADER_NAMES:
                continue
            here = [*path, str(key)]
            found: tuple[str, list[dict[str, Any]]] | None = None
            if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
                # MFDS-style [{"item": {...}}] wraps each row once more
                if all(len(r) == 1 and _flat(next(iter(r.values()))) for r in value) and not any(
                    _flat(r) for r in value
                ):
                    inner = next(iter(value[0]))
                    found = (".".join(here) + f"[].{inner}", [next(iter(r.values())) for r in value])
                elif any(_flat(r) for r in value):
                    found = (".".join(here) + "[]", value)
            elif isinstance(value, dict) and _flat(value) and _single_row_at(str(key).lower(), depth):
                found = (".".join(here), [value])
            if found is not None:
                rank = depth * 2 + (0 if isinstance(value, list) else 1)
                if best is None or rank < best[0]:
                    best = (rank, found[0], found[1])
                continue
            if isinstance(value, dict):
                visit(value, here, depth + 1)
            elif isinstance(value, list) and value and isinstance(value[0], dict) and depth < MAX_DEPTH:
                for element in value[:3]:  # StanReginCd: [{"head": [...]}, {"row": [...]}]
                    visit(element, [*here[:-1], here[-1] + "[]"], depth + 1)

    visit(doc, [], 0)
    return (best[1], best[2]) if best else None


#: Names under which a response states how many rows the query has in all (not the page), in the order read: a
#: filtered count (odcloud `matchCount`) before the table's, then the gateways' and other portals' spellings.
TOTAL_NAMES = (
    "matchcount",
    "totalcount",
    "total_count",
    "list_total_count",
    "totalcnt",
    "totcnt",
    "tot_cnt",
    "totalelements",
    "total_elements",
    "totalresults",
    "totalrecords",
    "total",
    "count",
)


# ---------------------------------------------------------------------- the providers' paging names
# The one home of what the engines know about how providers page: the readers below, and the sampling filters and
# page size (execution.sampling, execution.seeds), the names never linked (graph.link_scoring.NON_LINKABLE), the
# canonical call's first page (execution.canonical) and the view's paging note, all read these names when asked.


class PagePair(NamedTuple):
    """A page-number parameter and the page-size parameter beside it (lower case). A portal's pair counts pages
    from 1 and takes pages of 30 rows and more; a `generic` spelling is shared by unrelated APIs whose first page
    and largest page differ (Spring Data's `page` counts from 0, Kakao's `size` stops at 15)."""

    page: str
    size: str
    generic: bool = False


#: Page-number + page-size pairs, in the order they are matched: data.go.kr `pageNo`/`numOfRows`, juso
#: `currentPage`/`countPerPage`, odcloud `page`/`perPage`, eGovFrame `pageIndex`/`pageSize`, then generic ones.
PAGE_PAIRS: tuple[PagePair, ...] = (
    PagePair("pageno", "numofrows"),
    PagePair("currentpage", "countperpage"),
    PagePair("page", "perpage"),
    PagePair("pageindex", "pagesize"),
    PagePair("page_no", "page_size", generic=True),
    PagePair("page", "size", generic=True),
)
#: Page sizes that only requests spell (`rows` of Solr-backed portals, eGovFrame `pageUnit`).
REQUEST_SIZE_NAMES = ("rows", "pageunit")


def page_names() -> tuple[str, ...]:
    """Names (lower case) of a page number, as a request sends it or a response echoes it, in `PAGE_PAIRS` order."""
    return _pair_names(PAGE_PAIRS)[0]


def size_names() -> tuple[str, ...]:
    """Names (lower case) of a page size, as a request sends it or a response echoes it, in `PAGE_PAIRS` order."""
    return _pair_names(PAGE_PAIRS)[1]


@lru_cache(maxsize=8)
def _pair_names(pairs: tuple[PagePair, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(dict.fromkeys(p.page for p in pairs)), tuple(dict.fromkeys(p.size for p in pairs))


def portal_pair(names: Collection[str]) -> tuple[str, str] | None:
    """(page, size) as a tool spells them, of the first portal pair (not `generic`) among its parameter names;
    None when it has none."""
    lowered = {n.lower(): n for n in names}
    pairs = [p for p in PAGE_PAIRS if not p.generic and p.page in lowered and p.size in lowered]
    return (lowered[pairs[0].page], lowered[pairs[0].size]) if pairs else None


def portal_size(name: str) -> bool:
    """Whether a parameter of this name (any case) is the page size of a portal pair (not `generic`)."""
    return any(not p.generic and p.size == name.lower() for p in PAGE_PAIRS)


#: Parameters of index-range paging (서울 열린데이터광장 `/{START_INDEX}/{END_INDEX}`, 식품안전나라
#: `/{startIdx}/{endIdx}`): 1-based positions of the first and the last row asked for. Bare `start`/`end`
#: count only as integers, in a pair.
START_NAMES = ("start_index", "startindex", "start_idx", "startidx", "start_no", "startno", "startnum")
END_NAMES = ("end_index", "endindex", "end_idx", "endidx", "end_no", "endno", "endnum")


def index_range(params: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(start, end) parameter names of index-range paging among (name, type) pairs, None when there are none."""
    lowered = {name.lower(): (name, t) for name, t in params}
    start = next((lowered[n][0] for n in START_NAMES if n in lowered), None)
    end = next((lowered[n][0] for n in END_NAMES if n in lowered), None)
    if start and end:
        return start, end
    bare = (lowered.get("start"), lowered.get("end"))
    if bare[0] and bare[1] and bare[0][1] == bare[1][1] == "integer":
        return bare[0][0], bare[1][0]
    return None


#: Parameters of offset paging and of cursor paging.
OFFSET_NAMES = ("offset", "skip", "startrow", "start_row")
LIMIT_NAMES = ("limit", "maxresults", "max_results")
CURSOR_NAMES = ("cursor", "pagetoken", "page_token", "nexttoken", "next_token", "continuationtoken")


def paging_name(name: str) -> bool:
    """Whether a parameter of this name (any case) pages rather than filters, whatever the tool: a name above.
    Bare `start`/`end` page only as a pair of integers (`pages`)."""
    groups = (REQUEST_SIZE_NAMES, START_NAMES, END_NAMES, OFFSET_NAMES, LIMIT_NAMES, CURSOR_NAMES)
    return name.lower() in _all_names(PAGE_PAIRS, groups)


@lru_cache(maxsize=8)
def _all_names(pairs: tuple[PagePair, ...], groups: tuple[tuple[str, ...], ...]) -> frozenset[str]:
    return frozenset((*_pair_names(pairs)[0], *_pair_names(pairs)[1], *(n for g in groups for n in g)))


def pages(name: str, params: list[tuple[str, str]]) -> bool:
    """Whether parameter `name` of a tool with these (name, type) parameters pages through its answer."""
    return paging_name(name) or name in (index_range(params) or ())


def paging_kind(params: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """How a tool pages, read off its (name, type) parameters: ("index_range" | "page" | "offset" | "cursor" |
    "none", the parameters that page)."""
    rng = index_range(params)
    if rng is not None:
        return "index_range", list(rng)
    for kind, groups in (
        ("cursor", (CURSOR_NAMES,)),
        ("offset", (OFFSET_NAMES, LIMIT_NAMES)),
        ("page", (page_names(), size_names())),
    ):
        names = [name for name, _ in params if any(name.lower() in g for g in groups)]
        if names and (kind != "offset" or any(n.lower() in OFFSET_NAMES for n in names)):
            return kind, names
    return "none", []


def size_param(params: list[tuple[str, str]]) -> str | None:
    """The parameter that sets how many rows a page holds, by `paging_kind` (`numOfRows`, `perPage`, `limit`); None
    for an index range (its end says it) and for the kinds without one."""
    kind, names = paging_kind(params)
    group = size_names() if kind == "page" else LIMIT_NAMES if kind == "offset" else ()
    return next((n for n in names if n.lower() in group), None)


def page_args(params: list[tuple[str, str]], n: int, size: int) -> dict[str, Any]:
    """The paging arguments that ask for the `n`-th page (1-based) of `size` rows, by `paging_kind`: a page number,
    an offset (0-based, with the limit), or an index range; {} for cursor paging (a page is reached only through the
    token of the one before) and for tools that do not page."""
    kind, names = paging_kind(params)
    if kind == "index_range":
        return {names[0]: (n - 1) * size + 1, names[1]: n * size}
    if kind == "offset":
        start = next(x for x in names if x.lower() in OFFSET_NAMES)
        limit = size_param(params)
        return {start: (n - 1) * size + (0 if start.lower() in ZERO_BASED else 1), **({limit: size} if limit else {})}
    page = next((x for x in names if x.lower() in page_names()), None) if kind == "page" else None
    return {page: n} if page else {}


#: Offsets counted from 0 (`offset=20` starts at the 21st row, as in SQL and most REST APIs); `startRow` and its kin
#: are 1-based row numbers.
ZERO_BASED = ("offset", "skip")


def first_position(params: list[tuple[str, str]], args: dict[str, Any]) -> int | None:
    """The 1-based position of the first row a call asks for, read off its paging arguments by `paging_kind`: an
    index range's START, an offset (0-based) or a start row (1-based); None when the arguments say no position."""
    kind, names = paging_kind(params)
    if kind not in ("index_range", "offset"):
        return None
    name = names[0] if kind == "index_range" else next(n for n in names if n.lower() in OFFSET_NAMES)
    n = _count(args.get(name))
    if n is not None and name.lower() in ZERO_BASED and kind == "offset":
        n += 1
    return n if n is not None and n >= 1 else None


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 12:
        return int(value.strip())
    return None


def detect_paging(doc: Any, rows: list[dict[str, Any]]) -> tuple[int | None, int, int]:
    """(total, page, size) a response states about itself outside its rows: the provider's total row count for the
    query (None when it states none, or one smaller than the rows it sent), and the page number and size it echoes
    (0 when not stated). Read in the top levels, never inside a row."""
    skip = {id(r) for r in rows}
    found: dict[str, int] = {}
    page_keys, size_keys = page_names(), size_names()

    def visit(node: Any, depth: int) -> None:
        if depth > 4 or id(node) in skip:
            return
        if isinstance(node, list):
            for element in node[:4]:
                visit(element, depth + 1)
            return
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            k = str(key).lower()
            n = _count(value)
            if n is not None and k not in found and k in (*TOTAL_NAMES, *page_keys, *size_keys):
                found[k] = n
            elif isinstance(value, dict | list):
                visit(value, depth + 1)

    visit(doc, 0)
    total = next((found[k] for k in TOTAL_NAMES if k in found), None)
    if total is not None and total < len(rows):
        total = None  # a count of something else (a page's, a field's): the rows are the evidence
    page = next((found[k] for k in page_keys if k in found), 0)
    size = next((found[k] for k in size_keys if k in found), 0)
    return total, page, size


#: Names under which an answer hands over the token of its next page (cursor paging), in the order read: `nextToken`,
#: `next_cursor`, `nextPageToken`, a `cursor` echoed for the next call, or `next` when it is a token and not a URL.
NEXT_NAMES = (
    "nexttoken",
    "next_token",
    "nextcursor",
    "next_cursor",
    "nextpagetoken",
    "next_page_token",
    "cursor",
    "next",
)
MAX_TOKEN = 512


def detect_next(doc: Any, rows: list[dict[str, Any]], sent: Collection[str] = ()) -> str:
    """The token an answer gives for its next page, read in the top levels outside its rows; "" when it gives none
    (the last page says null, "" or false), gives a link rather than a token, or says that no page follows
    (`detect_more`). A value the call itself sent (`sent`) is the echo of the current cursor (`{"cursor": "c2",
    "nextCursor": null}` on the last page), never the next one: asking with it again would loop."""
    if detect_more(doc, rows) is False:
        return ""

    def token(value: Any) -> str | None:
        if not isinstance(value, str | int) or isinstance(value, bool):
            return None
        text = str(value).strip()
        link = text.startswith(("http:", "https:", "/"))
        return text if text and len(text) <= MAX_TOKEN and not link and text not in sent else None

    found = _outside_rows(doc, rows, NEXT_NAMES, token)
    return next((found[k] for k in NEXT_NAMES if k in found), "")


T = TypeVar("T")


def _outside_rows(
    doc: Any, rows: list[dict[str, Any]], names: tuple[str, ...], read: Callable[[Any], T | None]
) -> dict[str, T]:
    """The first value `read` accepts under each of `names` (lower case) in the top levels of an answer, never
    inside its rows."""
    skip = {id(r) for r in rows}
    found: dict[str, T] = {}

    def visit(node: Any, depth: int) -> None:
        if depth > 4 or id(node) in skip or not isinstance(node, dict | list):
            return
        for key, value in node.items() if isinstance(node, dict) else enumerate(node[:4]):
            k = str(key).lower()
            got = read(value) if k in names else None
            if got is not None:
                found.setdefault(k, got)
            elif isinstance(value, dict | list):
                visit(value, depth + 1)

    visit(doc, 0)
    return found


#: Flags by which an answer says whether another page follows, with or without a token (`hasNext`, `hasMore`), and
#: those that say this page is the last (Spring Data's `last`, `isLast`); only booleans (or Y/N, true/false) count.
MORE_NAMES = ("hasnext", "has_next", "hasnextpage", "has_next_page", "hasmore", "has_more", "moreresults")
LAST_NAMES = ("islast", "is_last", "last", "lastpage", "last_page")
_YES, _NO = ("true", "y", "yes"), ("false", "n", "no")


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in (*_YES, *_NO):
        return value.strip().lower() in _YES
    return None


def detect_more(doc: Any, rows: list[dict[str, Any]]) -> bool | None:
    """Whether the answer says another page follows (`hasNext: true`, `last: false`), read in the top levels outside
    its rows; None when it says nothing either way."""
    found = _outside_rows(doc, rows, (*MORE_NAMES, *LAST_NAMES), _flag)
    return next((found[k] if k in MORE_NAMES else not found[k] for k in (*MORE_NAMES, *LAST_NAMES) if k in found), None)


def next_param(params: list[tuple[str, str]]) -> str | None:
    """The parameter that asks for the next page, by `paging_kind`: the cursor parameter (it takes the answer's
    token), or the page number of page + size paging (an answer that only flags `hasNext`); None for the kinds
    whose next page is a position the caller computes (offset, index range) and for tools that do not page."""
    kind, names = paging_kind(params)
    if kind == "cursor":
        return names[0]
    if kind == "page":
        return next((n for n in names if n.lower() in page_names()), None)
    return None


def next_page(params: list[tuple[str, str]], args: dict[str, Any], default: Any = None) -> str:
    """The page number after the one a call of a page-numbered tool asked for (its argument, else the documented
    default, else 1): what an answer that flags `hasNext` without a token asks next; "" for other paging kinds."""
    name = next_param(params)
    if name is None or paging_kind(params)[0] != "page":
        return ""
    asked = _count(args.get(name))
    if asked is None:
        asked = _count(default)
    return str((1 if asked is None else asked) + 1)


def _scalar_member(node: dict[str, Any], names: tuple[str, ...]) -> str | None:
    """The first of `names` that `node` holds as a scalar, matched exactly, else in any case (NEIS and the Seoul
    portal write `CODE` and `MESSAGE`)."""
    exact = next((k for k in names if k in node and not isinstance(node[k], dict | list)), None)
    if exact is not None:
        return exact
    lowered = {str(k).lower(): k for k, v in node.items() if not isinstance(v, dict | list)}
    return next((lowered[n.lower()] for n in names if n.lower() in lowered), None)


def _header_in(node: dict[str, Any]) -> tuple[str, str] | None:
    code = _scalar_member(node, providers.CODE_NAMES)
    msg = _scalar_member(node, providers.MSG_NAMES)
    if code is not None and (code in providers.SPECIFIC_CODES or msg is not None):
        return str(node[code]).strip(), "" if msg is None else str(node[msg])
    error = node.get("error")
    if isinstance(error, str) and error.strip():
        return "ERROR", error.strip()
    if isinstance(error, dict):
        inner = _header_in(error)
        if inner is not None:
            return inner
        text = " ".join(str(v) for v in error.values() if not isinstance(v, dict | list))
        return ("ERROR", text) if text else None
    return None


def detect_header(doc: Any, depth: int = 0) -> tuple[str, str] | None:
    """(result code, message) read off a response's header wherever it sits in the top levels (rows are never
    read); an `error` text without a code reads as code "ERROR"; None when the response states no result. Lists
    of wrappers are looked into (NEIS: `{"svc": [{"head": [{"list_total_count": 1}, {"RESULT": {...}}]}, ...]}`),
    never a list's flat records, which are rows."""
    if not isinstance(doc, dict) or depth > 3:
        return None
    here = _header_in(doc)
    if here is not None:
        return here
    for key, value in doc.items():
        if str(key).lower() in ("item", "items", "data", "row", "rows", "list"):
            continue
        nodes = [value] if isinstance(value, dict) else value[:4] if isinstance(value, list) else []
        for node in nodes:
            if isinstance(node, dict) and (node is value or not _flat(node)):
                got = detect_header(node, depth + 1)
                if got is not None:
                    return got
    return None


def error_kind(message: str) -> str:
    """How to read an error text without a known code: "empty" (no data), "auth" (the key), or "invalid"."""
    text = message.lower()
    if any(w in text for w in providers.NO_DATA_WORDS):
        return "empty"
    if any(w in text for w in providers.AUTH_WORDS):
        return "auth"
    return "invalid"


# ---------------------------------------------------------------------- schemas


def schema_items(schema: dict[str, Any], resolve: Resolve) -> tuple[str, dict[str, Any]] | None:
    """(items path, item schema) of a response schema that no known envelope matched: the shallowest array of
    objects, or an object under a row-like name; None when the schema shows no rows."""
    best: tuple[int, str, dict[str, Any]] | None = None

    def props(s: dict[str, Any]) -> dict[str, Any]:
        out = dict(s.get("properties") or {})
        for alt in [*s.get("anyOf", []), *s.get("oneOf", [])]:
            out.update(resolve(alt).get("properties") or {})
        return out

    def visit(s: dict[str, Any], path: list[str], depth: int) -> None:
        nonlocal best
        if depth > MAX_DEPTH:
            return
        for key, sub in props(s).items():
            if str(key).lower() in HEADER_NAMES:
                continue
            sub = resolve(sub)
            here = [*path, str(key)]
            if sub.get("type") == "array" or ("items" in sub and not sub.get("properties")):
                item = resolve(sub.get("items", {}))
                members = props(item)
                if members and not wrapper_schema(members, resolve):
                    rank = depth * 2
                    if best is None or rank < best[0]:
                        best = (rank, ".".join(here) + "[]", item)
                elif members:  # NEIS: [{"head": [...]}, {"row": [...]}], the rows one level inside each element
                    visit(item, [*path, str(key) + "[]"], depth + 1)
                continue
            inner = props(sub)
            if inner and str(key).lower() in ROW_NAMES and depth > 0 and _flat_schema(inner, resolve):
                rank = depth * 2 + 1
                if best is None or rank < best[0]:
                    best = (rank, ".".join(here), sub)
                continue
            if inner:
                visit(sub, here, depth + 1)

    visit(schema, [], 0)
    return (best[1], best[2]) if best else None


def wrapper_schema(properties: dict[str, Any], resolve: Resolve) -> bool:
    """Property schemas of a wrapper of other records (every member an object or an array), not of a row."""
    return bool(properties) and all(
        (s := resolve(sub)).get("type") in ("object", "array") or bool(s.get("properties")) or "items" in s
        for sub in properties.values()
    )


def _flat_schema(properties: dict[str, Any], resolve: Resolve) -> bool:
    scalars = 0
    for sub in properties.values():
        s = resolve(sub)
        if s.get("type") not in ("object", "array") and not s.get("properties"):
            scalars += 1
    return scalars >= max(1, len(properties) // 2)
