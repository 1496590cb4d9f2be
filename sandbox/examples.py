"""Working example arguments for every sandbox operation, taken from the world of a seed.

The catalog fills parameter `example`s from the default seed's world (real portal documents carry examples from
the real world in the same way), and the sandbox's own tests use them to prove every operation answers.
"""

from __future__ import annotations

from datetime import timedelta

from core.json_types import JsonObject
from sandbox.clock import DEFAULT_NOW
from sandbox.entities import World


def example_args(world: World) -> dict[str, JsonObject]:
    """op id -> arguments (query parameters; for POST operations the key `__body__` holds the JSON body)."""
    now = DEFAULT_NOW
    cx = next(c for c in world.complexes if c.building.adm_cd.startswith("11") and c.building.mt_yn == "0")
    bld = cx.building
    last_month = (now.replace(day=1) - timedelta(days=1)).strftime("%Y%m")
    djs = [s for s in world.bus_stops if s.city_code == "25"]
    stop = djs[0]
    route = next(r for r in world.bus_routes if r.city_code == "25")
    hosp = next(f for f in world.facilities if not f.is_pharmacy and f.building.adm_cd.startswith("11"))
    jongno = next(s for s in world.stations if s.name == "종로구")
    maker = world.drugs[0].maker
    tour: JsonObject = {"MobileOS": "ETC", "MobileApp": "KOPA"}
    kma: JsonObject = {"base_date": now.strftime("%Y%m%d"), "nx": "60", "ny": "127", "numOfRows": "1000"}
    rtms: JsonObject = {"LAWD_CD": cx.building.sgg_cd, "DEAL_YMD": last_month}
    bld_args: JsonObject = {
        "sigunguCd": bld.adm_cd[:5],
        "bjdongCd": bld.adm_cd[5:],
        "bun": f"{bld.lnbr_mnnm:04d}",
        "ji": f"{bld.lnbr_slno:04d}",
    }
    return {
        "StanReginCd.getStanReginCdList": {"locatadd_nm": "서울특별시 종로구"},
        "addrlink.addrLinkApi.do": {"keyword": f"{bld.region.sgg_nm} {bld.road_name} {bld.buld_mnnm}"},
        "addrlink.addrCoordApi.do": {
            "admCd": bld.adm_cd,
            "rnMgtSn": bld.rn_mgt_sn,
            "udrtYn": bld.udrt_yn,
            "buldMnnm": str(bld.buld_mnnm),
            "buldSlno": str(bld.buld_slno),
        },
        "RTMSDataSvcAptTrade.getRTMSDataSvcAptTrade": rtms,
        "RTMSDataSvcAptTradeDev.getRTMSDataSvcAptTradeDev": rtms,
        "RTMSDataSvcAptRent.getRTMSDataSvcAptRent": rtms,
        "BldRgstHubService.getBrTitleInfo": bld_args,
        "BldRgstHubService.getBrBasisOulnInfo": bld_args,
        "AptListService4.getLegaldongAptList4": {"bjdCode": cx.building.adm_cd},
        "AptListService4.getSigunguAptList4": {"sigunguCode": cx.building.sgg_cd},
        "AptBasisInfoServiceV5.getAphusBassInfoV5": {"kaptCode": cx.kapt_code},
        "VilageFcstInfoService_2.0.getUltraSrtNcst": {**kma, "base_time": "1300"},
        "VilageFcstInfoService_2.0.getUltraSrtFcst": {**kma, "base_time": "1330"},
        "VilageFcstInfoService_2.0.getVilageFcst": {**kma, "base_time": "1100"},
        "MidFcstInfoService.getMidTa": {"regId": "11B10101", "tmFc": now.strftime("%Y%m%d") + "0600"},
        "AsosDalyInfoService.getWthrDataList": {
            "dataCd": "ASOS",
            "dateCd": "DAY",
            "stnIds": "108",
            "startDt": (now - timedelta(days=10)).strftime("%Y%m%d"),
            "endDt": (now - timedelta(days=1)).strftime("%Y%m%d"),
        },
        "MsrstnInfoInqireSvc.getMsrstnList": {"addr": "서울"},
        "MsrstnInfoInqireSvc.getNearbyMsrstnList": {"tmX": f"{jongno.tm_x:.2f}", "tmY": f"{jongno.tm_y:.2f}"},
        "MsrstnInfoInqireSvc.getTMStdrCrdnt": {"umdName": "혜화동"},
        "ArpltnInforInqireSvc.getMsrstnAcctoRltmMesureDnsty": {
            "stationName": "종로구",
            "dataTerm": "DAILY",
            "ver": "1.3",
        },
        "ArpltnInforInqireSvc.getCtprvnRltmMesureDnsty": {"sidoName": "서울", "ver": "1.3"},
        "ArvlInfoInqireService.getCtyCodeList": {},
        "BusSttnInfoInqireService.getSttnNoList": {"cityCode": "25", "nodeNm": stop.node_nm},
        "BusSttnInfoInqireService.getCrdntPrxmtSttnList": {"gpsLati": f"{stop.lat:.7f}", "gpsLong": f"{stop.lon:.7f}"},
        "BusSttnInfoInqireService.getSttnThrghRouteList": {"cityCode": "25", "nodeid": stop.node_id},
        "ArvlInfoInqireService.getSttnAcctoArvlPrearngeInfoList": {"cityCode": "25", "nodeId": stop.node_id},
        "BusRouteInfoInqireService.getRouteNoList": {"cityCode": "25", "routeNo": route.route_no},
        "BusRouteInfoInqireService.getRouteAcctoThrghSttnList": {"cityCode": "25", "routeId": route.route_id},
        "BusRouteInfoInqireService.getRouteInfoIem": {"cityCode": "25", "routeId": route.route_id},
        "KorService2.ldongCode2": {**tour},
        "KorService2.areaBasedList2": {**tour},
        "KorService2.locationBasedList2": {**tour, "mapX": "126.9769930325", "mapY": "37.578822235", "radius": "2000"},
        "KorService2.searchKeyword2": {**tour, "keyword": "경복궁"},
        "KorService2.detailCommon2": {**tour, "contentId": "126508"},
        "KorService2.detailIntro2": {**tour, "contentId": "126508", "contentTypeId": "12"},
        "hospInfoServicev2.getHospBasisList": {"sidoCd": "110000"},
        "MadmDtlInfoService2.7.getDtlInfo2.7": {"ykiho": hosp.ykiho},
        "MadmDtlInfoService2.7.getDgsbjtInfo2.7": {"ykiho": hosp.ykiho},
        "pharmacyInfoService.getParmacyBasisList": {"sidoCd": "110000"},
        "DrbEasyDrugInfoService.getDrbEasyDrugList": {"itemName": "아세트아미노펜"},
        "MdcinGrnIdntfcInfoService03.getMdcinGrnIdntfcInfoList03": {"item_name": "아세트아미노펜"},
        "DURPrdlstInfoService03.getDurPrdlstInfoList03": {"itemName": "와파린"},
        "DURPrdlstInfoService03.getUsjntTabooInfoList03": {"ingrCode": "D000245"},
        "nts-businessman.status": {"__body__": {"b_no": [maker.b_no]}},
        "nts-businessman.validate": {
            "__body__": {"businesses": [{"b_no": maker.b_no, "start_dt": maker.start_dt, "p_nm": maker.rep}]}
        },
    }
