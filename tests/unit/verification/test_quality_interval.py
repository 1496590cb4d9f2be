"""The 95% Wilson score interval perf.verify_quality prints with the measured precision, and the shape of the labelled
sample it is measured on (tests/support/sandbox_verified_sample.json). Pure functions and one JSON file: no services."""

from __future__ import annotations

import math

import pytest

from tests.support.scoring import Z95, _key, sample_doc, wilson_interval


def test_z_is_the_two_sided_95_percent_quantile() -> None:
    # Phi(z) = 0.975
    assert 0.5 * math.erfc(-Z95 / math.sqrt(2)) == pytest.approx(0.975, abs=1e-12)


def test_known_values() -> None:
    assert wilson_interval(50, 100) == pytest.approx((0.403832, 0.596168), abs=1e-6)
    # at 0 and n successes the bounds have closed forms: z^2 / (n + z^2) and n / (n + z^2)
    z2 = Z95 * Z95
    assert wilson_interval(0, 10) == pytest.approx((0.0, z2 / (10 + z2)))
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10) == pytest.approx((10 / (10 + z2), 1.0))
    assert wilson_interval(10, 10)[1] == 1.0
    # 38 of 40, the sample's first part
    low, high = wilson_interval(38, 40)
    assert (round(low, 4), round(high, 4)) == (0.8350, 0.9862)


def test_interval_holds_the_estimate_and_narrows_with_n() -> None:
    for s, n in ((1, 3), (19, 20), (203, 220), (950, 1000)):
        low, high = wilson_interval(s, n)
        assert 0.0 <= low < s / n < high <= 1.0
    assert wilson_interval(190, 200)[0] < wilson_interval(950, 1000)[0]
    assert wilson_interval(950, 1000)[1] < wilson_interval(190, 200)[1]


def test_symmetric_in_successes_and_failures() -> None:
    for s, n in ((0, 7), (3, 7), (17, 220)):
        flow, fhigh = wilson_interval(n - s, n)
        assert wilson_interval(s, n) == pytest.approx((1 - fhigh, 1 - flow))


def test_wider_for_a_larger_z() -> None:
    low95, high95 = wilson_interval(30, 40)
    low99, high99 = wilson_interval(30, 40, z=2.5758293035489)
    assert low99 < low95 and high95 < high99


def test_no_observations_and_bad_counts() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    for s, n in ((-1, 5), (6, 5), (0, -1)):
        with pytest.raises(ValueError):
            wilson_interval(s, n)


def test_the_labelled_sample() -> None:
    doc = sample_doc()
    links = doc["links"]
    assert doc["sample_size"] == len(links) >= 200
    by_catalog: dict[str, int] = {}
    keys = set()
    for g in links:
        assert g["label"] in ("true", "false")
        assert g["why"].strip() and "\n" not in g["why"]
        by_catalog[g["catalog"]] = by_catalog.get(g["catalog"], 0) + 1
        keys.add(_key(g["source_tool"], g["source_field"], g["target_tool"], g["target_param"], g["transform"]))
    assert len(keys) == len(links)
    assert set(by_catalog) == {"sandbox", "generated"} and min(by_catalog.values()) >= 90
    # the generated part's tools are named by copy (`_rNN`), so one set of links scores both parts
    assert all(("_r0" in g["source_tool"]) == (g["catalog"] == "generated") for g in links)
    run = doc["generated_run"]
    assert run["instances"] > max(run["pair"])
