"""Samples beyond a plain request and answer: clarification turns (the assistant asks for what the request
leaves out), irrelevant requests no tool answers, and the optional paraphrase through an on-premise endpoint."""

from __future__ import annotations

import random
import re
from typing import Any

from graph.concepts import norm
from graph.models import ParamRecord, ToolRecord
from synthesis.korean import fmt_value, has_batchim, josa, ro, short_description
from synthesis.language import goal
from synthesis.records import Trajectory

# ---------------------------------------------------------------------------------------------- special samples

_ASK = {
    "keyword": "주소",
    "addr": "주소",
    "umdname": "동네 이름(읍면동)",
    "emdongnm": "동네 이름(읍면동)",
    "stationname": "측정소 이름",
    "itemname": "약 이름",
    "item_name": "약 이름",
    "bno": "사업자등록번호",
    "sidoname": "시도",
    "dealymd": "계약 연월",
    "yadmnm": "기관 이름",
    "locataddnm": "지역 이름",
    "nodenm": "정류소 이름",
    "entpname": "업체 이름",
    "routeno": "버스 번호",
}


def clarification_turns(
    record: Trajectory, param: ParamRecord, value: Any, rnd: random.Random
) -> tuple[str, str, str] | None:
    """(opening without the value, the assistant's question, the user's reply that supplies it)."""
    text = fmt_value(param.name, value)
    if text not in record.request:
        return None
    tail = r"'?\s*(지역의|지역|측정소의|측정소|의|근처|기준으로|기준|쪽|관련|번 버스)?\s*"
    opening = re.sub("'?" + re.escape(text) + tail, "", record.request)
    opening = re.sub(r"\s+", " ", opening).strip()
    if len(opening) < 6:
        return None
    label = _ASK.get(norm(param.name), short_description(param.description) or param.name)
    if norm(param.name) == "keyword" and "주소" not in param.description:
        label = "장소 이름"
    question = rnd.choice(
        [
            f"어느 {josa(label, '을', '를')} 기준으로 확인할까요?",
            f"확인하려면 {label}{'이' if has_batchim(label) else '가'} 필요해요. 알려 주시겠어요?",
            f"{josa(label, '을', '를')} 알려 주시면 바로 찾아 드릴게요.",
        ]
    )
    reply = rnd.choice(
        [
            f"{josa(text, '이요', '요')}.",
            f"{text} 기준으로 부탁해요.",
            f"{josa(text, '이에요', '예요')}.",
            f"{text}입니다.",
            f"{ro(text)} 알려 주세요.",
        ]
    )
    return opening, question, reply


#: Requests no offered tool serves, each with its own reply when the assistant can give one without tools (the
#: arithmetic worked out, the general fact, the text asked for, or a question for what the request leaves out);
#: None for one it should decline (today's charts and listings, investment advice), which is declined saying what
#: the tools cover.
_IRRELEVANT: list[tuple[str, str | None]] = [
    (
        "오늘 저녁 메뉴 좀 추천해 줘.",
        "따뜻한 된장찌개에 계란말이를 곁들이면 부담 없는 저녁이 돼요. 가볍게 드시고 싶다면 비빔밥도 좋아요.",
    ),
    (
        "이 문장을 영어로 번역해 줄래요? '회의는 내일 오전 10시입니다.'",
        "'The meeting is at 10 a.m. tomorrow.'라고 옮기면 돼요.",
    ),
    (
        "파이썬으로 리스트를 정렬하는 방법 알려 주세요.",
        "리스트 자체를 정렬하려면 `items.sort()`를, 원래 리스트는 그대로 두고 정렬된 새 리스트를 얻으려면 "
        "`sorted(items)`를 쓰면 돼요. 내림차순으로 정렬하려면 둘 다 `reverse=True`를 넘기면 됩니다.",
    ),
    ("주말에 볼 만한 영화 추천해 주세요.", None),
    ("123 곱하기 456은 얼마야?", "123 곱하기 456은 56,088이에요."),
    (
        "자기소개서 첫 문장 좀 다듬어 주세요.",
        "다듬을 첫 문장을 보내 주시면 더 자연스럽고 인상적인 문장으로 고쳐 드릴게요.",
    ),
    (
        "다음 주 팀 회식 장소 투표 문구 만들어 줘.",
        "'다음 주 팀 회식 장소를 정하려고 합니다. 가고 싶은 곳에 투표해 주시고, 다른 장소를 추천하고 싶으시면 "
        "댓글로 남겨 주세요!' 같은 문구는 어떠세요?",
    ),
    ("요즘 인기 있는 노래 알려 줘.", None),
    (
        "엑셀에서 VLOOKUP 쓰는 법 알려 주세요.",
        "=VLOOKUP(찾을 값, 찾을 범위, 가져올 열 번호, FALSE) 형식으로 써요. 찾을 값은 범위의 맨 왼쪽 열에서 "
        "찾고, 마지막 인수 FALSE는 정확히 일치하는 값만 찾으라는 뜻이에요.",
    ),
    ("생일 축하 메시지 짧게 써 줘.", "생일 축하해요! 올 한 해도 건강하고 좋은 일만 가득하길 바랄게요."),
    ("주식 어떤 종목 사면 좋을까요?", None),
    (
        "고양이가 밥을 안 먹는데 왜 그럴까요?",
        "스트레스나 환경 변화, 사료 변경, 치아나 소화기 문제, 다른 질병 등 여러 원인이 있을 수 있어요. 고양이는 "
        "하루 넘게 굶으면 건강이 크게 나빠질 수 있으니, 계속 먹지 않으면 동물병원에서 진료를 받아 보세요.",
    ),
    (
        "보고서 제목 세 가지만 제안해 주세요.",
        "어떤 내용의 보고서인지 알려 주시면 그에 맞는 제목 세 가지를 제안해 드릴게요.",
    ),
    (
        "민원 답변 메일 인사말을 써 주세요.",
        "'안녕하십니까. 저희 기관에 민원을 보내 주셔서 감사드립니다. 문의하신 내용에 대해 아래와 같이 "
        "답변드립니다.'로 시작하면 돼요.",
    ),
    (
        "분석 결과를 요약하는 문장 하나 만들어 주세요.",
        "요약할 분석 결과를 알려 주시면 핵심이 잘 드러나는 문장 하나로 정리해 드릴게요.",
    ),
    (
        "회의록 양식 만들어 줄 수 있나요?",
        "회의명, 일시, 장소, 참석자, 안건, 논의 내용, 결정 사항, 후속 조치(담당자와 기한) 순서로 항목을 두면 "
        "기본적인 회의록 양식이 돼요.",
    ),
    (
        "시 한 편 지어 줘.",
        "창가에 머문 오후 햇살이 / 조용히 책장을 넘기고 / 식은 찻잔 위로 / 하루가 천천히 저물어 갑니다.",
    ),
    (
        "이번 달 운동 계획표 짜 줘.",
        "주 4회를 기준으로 월·목요일은 근력 운동 40분, 화·토요일은 걷기나 자전거 같은 유산소 운동 30분, 나머지 "
        "날은 스트레칭으로 쉬어 가는 계획을 추천해요. 첫 주는 가볍게 시작해서 조금씩 강도를 올려 보세요.",
    ),
    ("영어 단어 'ubiquitous' 뜻이 뭐야?", "'ubiquitous'는 '어디에나 있는, 아주 흔한'이라는 뜻이에요."),
    (
        "커피와 녹차 중 카페인이 더 많은 건?",
        "같은 한 잔이면 보통 커피가 더 많아요. 커피 한 잔에는 대략 100mg 안팎, 녹차 한 잔에는 30mg 안팎의 "
        "카페인이 들어 있어요.",
    ),
]
_REPLIES = dict(_IRRELEVANT)


def irrelevant_request(rnd: random.Random) -> str:
    return rnd.choice(_IRRELEVANT)[0]


def irrelevance_answer(tools: list[ToolRecord], rnd: random.Random, request: str = "") -> str:
    """The reply to a request no offered tool serves: its own answer when the assistant can give one without tools,
    else a refusal that says what the tools cover."""
    names = ", ".join(goal(t, {})[0] for t in tools[:3])
    declined = rnd.choice(
        [
            "죄송하지만 이 요청은 제가 쓸 수 있는 도구로는 도와드릴 수 없어요. "
            f"지금은 {names} 같은 공공데이터 조회를 도와드릴 수 있습니다.",
            f"죄송하지만 이 요청은 지금 연결된 도구({names})로는 확인할 수 없어요. "
            "공공데이터 조회가 필요하시면 말씀해 주세요.",
        ]
    )
    return _REPLIES.get(request) or declined
