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


_IRRELEVANT = [
    "오늘 저녁 메뉴 좀 추천해 줘.",
    "이 문장을 영어로 번역해 줄래요? '회의는 내일 오전 10시입니다.'",
    "파이썬으로 리스트를 정렬하는 방법 알려 주세요.",
    "주말에 볼 만한 영화 추천해 주세요.",
    "123 곱하기 456은 얼마야?",
    "자기소개서 첫 문장 좀 다듬어 주세요.",
    "다음 주 팀 회식 장소 투표 문구 만들어 줘.",
    "요즘 인기 있는 노래 알려 줘.",
    "엑셀에서 VLOOKUP 쓰는 법 알려 주세요.",
    "생일 축하 메시지 짧게 써 줘.",
    "주식 어떤 종목 사면 좋을까요?",
    "고양이가 밥을 안 먹는데 왜 그럴까요?",
    "보고서 제목 세 가지만 제안해 주세요.",
    "민원 답변 메일 인사말을 써 주세요.",
    "분석 결과를 요약하는 문장 하나 만들어 주세요.",
    "회의록 양식 만들어 줄 수 있나요?",
    "시 한 편 지어 줘.",
    "이번 달 운동 계획표 짜 줘.",
    "영어 단어 'ubiquitous' 뜻이 뭐야?",
    "커피와 녹차 중 카페인이 더 많은 건?",
]


def irrelevant_request(rnd: random.Random) -> str:
    return rnd.choice(_IRRELEVANT)


def irrelevance_answer(tools: list[ToolRecord], rnd: random.Random) -> str:
    names = ", ".join(goal(t, {})[0] for t in tools[:3])
    return rnd.choice(
        [
            "죄송하지만 이 요청은 제가 쓸 수 있는 도구로는 도와드릴 수 없어요. "
            f"지금은 {names} 같은 공공데이터 조회를 도와드릴 수 있습니다.",
            f"지금 연결된 도구({names})는 이 요청과 관련이 없어서 도구를 "
            "쓰지 않고 답변드려요. 공공데이터 조회가 필요하시면 말씀해 주세요.",
        ]
    )
