"""Gazetteer of South Korea's administrative regions (행정구역): the 시도, their 시군구 and the 일반구 of large cities.

Source: the 행정안전부 행정구역 list (행정표준코드) as of 2026, with the 2026-07-01 changes, in code order.
"""

from __future__ import annotations

from functools import lru_cache

# Changes this list reflects: 강원특별자치도 (2023-06-11), 군위군 moved from 경상북도 to 대구광역시 (2023-07-01),
# 전북특별자치도 (2024-01-18), 부천시 일반구 restored (2024-01-01), 화성시 일반구 (2026-02-01), and on 2026-07-01
# 광주광역시 + 전라남도 -> 전남광주통합특별시 (16 시도 since) and 인천 중구·동구·서구 -> 제물포구·영종구·서해구·검단구.

# 시도 full name -> short form.
SIDO: dict[str, str] = {
    "서울특별시": "서울",
    "부산광역시": "부산",
    "대구광역시": "대구",
    "인천광역시": "인천",
    "대전광역시": "대전",
    "울산광역시": "울산",
    "세종특별자치시": "세종",
    "경기도": "경기",
    "강원특별자치도": "강원",
    "충청북도": "충북",
    "충청남도": "충남",
    "전북특별자치도": "전북",
    "전남광주통합특별시": "전남광주",
    "경상북도": "경북",
    "경상남도": "경남",
    "제주특별자치도": "제주",
}

# Former 시도 full name -> (its short form, the 시도 that replaced it). Older data and API documents still use these.
FORMER_SIDO: dict[str, tuple[str, str]] = {
    "강원도": ("강원", "강원특별자치도"),
    "전라북도": ("전북", "전북특별자치도"),
    "광주광역시": ("광주", "전남광주통합특별시"),
    "전라남도": ("전남", "전남광주통합특별시"),
}

# 시도 full name -> its 시군구 (기초자치단체; for 제주 the two 행정시), in official code order.
# Names repeat across 시도 (중구, 동구, 서구, 남구, 북구, 강서구, 고성군, 광주시/광주 ...): each is kept under its 시도.
SIGUNGU: dict[str, tuple[str, ...]] = {
    "서울특별시": (
        "종로구",
        "중구",
        "용산구",
        "성동구",
        "광진구",
        "동대문구",
        "중랑구",
        "성북구",
        "강북구",
        "도봉구",
        "노원구",
        "은평구",
        "서대문구",
        "마포구",
        "양천구",
        "강서구",
        "구로구",
        "금천구",
        "영등포구",
        "동작구",
        "관악구",
        "서초구",
        "강남구",
        "송파구",
        "강동구",
    ),
    "부산광역시": (
        "중구",
        "서구",
        "동구",
        "영도구",
        "부산진구",
        "동래구",
        "남구",
        "북구",
        "해운대구",
        "사하구",
        "금정구",
        "강서구",
        "연제구",
        "수영구",
        "사상구",
        "기장군",
    ),
    "대구광역시": ("중구", "동구", "서구", "남구", "북구", "수성구", "달서구", "달성군", "군위군"),
    "인천광역시": (
        "제물포구",
        "영종구",
        "미추홀구",
        "연수구",
        "남동구",
        "부평구",
        "계양구",
        "서해구",
        "검단구",
        "강화군",
        "옹진군",
    ),
    "대전광역시": ("동구", "중구", "서구", "유성구", "대덕구"),
    "울산광역시": ("중구", "남구", "동구", "북구", "울주군"),
    "세종특별자치시": (),
    "경기도": (
        "수원시",
        "성남시",
        "의정부시",
        "안양시",
        "부천시",
        "광명시",
        "평택시",
        "동두천시",
        "안산시",
        "고양시",
        "과천시",
        "구리시",
        "남양주시",
        "오산시",
        "시흥시",
        "군포시",
        "의왕시",
        "하남시",
        "용인시",
        "파주시",
        "이천시",
        "안성시",
        "김포시",
        "화성시",
        "광주시",
        "양주시",
        "포천시",
        "여주시",
        "연천군",
        "가평군",
        "양평군",
    ),
    "강원특별자치도": (
        "춘천시",
        "원주시",
        "강릉시",
        "동해시",
        "태백시",
        "속초시",
        "삼척시",
        "홍천군",
        "횡성군",
        "영월군",
        "평창군",
        "정선군",
        "철원군",
        "화천군",
        "양구군",
        "인제군",
        "고성군",
        "양양군",
    ),
    "충청북도": (
        "청주시",
        "충주시",
        "제천시",
        "보은군",
        "옥천군",
        "영동군",
        "증평군",
        "진천군",
        "괴산군",
        "음성군",
        "단양군",
    ),
    "충청남도": (
        "천안시",
        "공주시",
        "보령시",
        "아산시",
        "서산시",
        "논산시",
        "계룡시",
        "당진시",
        "금산군",
        "부여군",
        "서천군",
        "청양군",
        "홍성군",
        "예산군",
        "태안군",
    ),
    "전북특별자치도": (
        "전주시",
        "군산시",
        "익산시",
        "정읍시",
        "남원시",
        "김제시",
        "완주군",
        "진안군",
        "무주군",
        "장수군",
        "임실군",
        "순창군",
        "고창군",
        "부안군",
    ),
    # The former 광주광역시 자치구 keep their names; code order puts them after the 시 of the former 전라남도.
    "전남광주통합특별시": (
        "목포시",
        "여수시",
        "순천시",
        "나주시",
        "광양시",
        "동구",
        "서구",
        "남구",
        "북구",
        "광산구",
        "담양군",
        "곡성군",
        "구례군",
        "고흥군",
        "보성군",
        "화순군",
        "장흥군",
        "강진군",
        "해남군",
        "영암군",
        "무안군",
        "함평군",
        "영광군",
        "장성군",
        "완도군",
        "진도군",
        "신안군",
    ),
    "경상북도": (
        "포항시",
        "경주시",
        "김천시",
        "안동시",
        "구미시",
        "영주시",
        "영천시",
        "상주시",
        "문경시",
        "경산시",
        "의성군",
        "청송군",
        "영양군",
        "영덕군",
        "청도군",
        "고령군",
        "성주군",
        "칠곡군",
        "예천군",
        "봉화군",
        "울진군",
        "울릉군",
    ),
    "경상남도": (
        "창원시",
        "진주시",
        "통영시",
        "사천시",
        "김해시",
        "밀양시",
        "거제시",
        "양산시",
        "의령군",
        "함안군",
        "창녕군",
        "고성군",
        "남해군",
        "하동군",
        "산청군",
        "함양군",
        "거창군",
        "합천군",
    ),
    "제주특별자치도": ("제주시", "서귀포시"),
}

# 시도 full name -> {former 시군구: the 시군구 that took over its area}, for the 2026-07-01 인천 reorganization.
FORMER_SIGUNGU: dict[str, dict[str, tuple[str, ...]]] = {
    "인천광역시": {
        "중구": ("제물포구", "영종구"),
        "동구": ("제물포구",),
        "서구": ("서해구", "검단구"),
    },
}

# City -> its 일반구 (administrative, not self-governing), in official code order.
GENERAL_GU: dict[str, tuple[str, ...]] = {
    "수원시": ("장안구", "권선구", "팔달구", "영통구"),
    "성남시": ("수정구", "중원구", "분당구"),
    "안양시": ("만안구", "동안구"),
    "부천시": ("원미구", "소사구", "오정구"),
    "안산시": ("상록구", "단원구"),
    "고양시": ("덕양구", "일산동구", "일산서구"),
    "용인시": ("처인구", "기흥구", "수지구"),
    "화성시": ("만세구", "효행구", "병점구", "동탄구"),
    "청주시": ("상당구", "서원구", "흥덕구", "청원구"),
    "천안시": ("동남구", "서북구"),
    "전주시": ("완산구", "덕진구"),
    "포항시": ("남구", "북구"),
    "창원시": ("의창구", "성산구", "마산합포구", "마산회원구", "진해구"),
}

# Stems (a name less its 시/군/구) that are everyday words in Korean text, so they are not taken as place names:
# 동작 (motion), 수영 (swimming), 분당 (per minute), 예산 (budget), 음성 (voice), 영양 (nutrition), 남동 (southeast) ...
_COMMON_WORD_STEMS: frozenset[str] = frozenset(
    {
        "동작",
        "수영",
        "사상",
        "기장",
        "달성",
        "연수",
        "남동",
        "강화",
        "광산",
        "구리",
        "양주",
        "음성",
        "부여",
        "예산",
        "장수",
        "영광",
        "장성",
        "진도",
        "경주",
        "상주",
        "영양",
        "고령",
        "양산",
        "거창",
        "수정",
        "분당",
        "동안",
        "단원",
        "수지",
        "만세",
        "상당",
        "서원",
        "청원",
        "동남",
        "서북",
    }
)


@lru_cache(maxsize=1)
def place_names() -> frozenset[str]:
    """Every 시도 (full and short, current and former), 시군구 and 일반구 name, plus their stems.

    A stem is a 시군구 or 일반구 name without its last character (해운대구 -> 해운대, 수원시 -> 수원), kept when it
    has at least two characters and is not an everyday word (중구 -> 중 and 동작구 -> 동작 are left out).
    """
    names: set[str] = set()
    for full, short in SIDO.items():
        names.update((full, short))
    for full, (short, _current) in FORMER_SIDO.items():
        names.update((full, short))
    units = [name for names_ in SIGUNGU.values() for name in names_]
    units += [name for former in FORMER_SIGUNGU.values() for name in former]
    units += [name for gu in GENERAL_GU.values() for name in gu]
    for name in units:
        names.add(name)
        stem = name[:-1]
        if len(stem) >= 2 and stem not in _COMMON_WORD_STEMS:
            names.add(stem)
    return frozenset(names)
