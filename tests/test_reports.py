"""``report``: each built-in report on small hand-made archives whose answers are known exactly."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import pytest

from mortecouille.app.simulate import simulate
from mortecouille.events.base import Event
from mortecouille.events.combat import FireChecked, ShotFired
from mortecouille.events.fleet import FleetEquipped, ShipBought
from mortecouille.events.game import DieRolled
from mortecouille.events.movement import DamageTaken, ShipSunk
from mortecouille.events.rulings import Adjustment, RulingRecorded
from mortecouille.replays.analytics.archive import archive_games
from mortecouille.replays.analytics.reports import (
    Report,
    build_report,
    chi_square_p_value,
    chi_square_uniform,
    regularized_upper_gamma,
)
from tests.cli_helpers import run_cli
from tests.helpers import write_game

pytestmark = pytest.mark.slow


def archive_of(tmp_path: Path, games: dict[str, tuple[Sequence[Event], str | None]]) -> Path:
    directory = tmp_path / "games"
    for name, (body, winner) in games.items():
        write_game(directory, name, body, winner=winner)
    target = tmp_path / "archive"
    result = archive_games(sorted(directory.glob("*.jsonl")), target, "2026-03")
    assert result.exit_code == 0 and len(result.archived) == len(games), result
    return target


def table_rolls(values: Sequence[int], purpose: str = "wind") -> list[DieRolled]:
    return [
        DieRolled(turn=1, phase="wind", ship=None, purpose=purpose, index=i, sides=6, value=v, source="table")
        for i, v in enumerate(values)
    ]


def section_rows(report: Report, index: int = 0) -> list[tuple[object, ...]]:
    return [tuple(row) for row in report.sections[index].rows]


# ------------------------------------------------------------------ chi-square


@pytest.mark.parametrize(
    ("statistic", "freedom", "p_value"),
    [
        (3.841458820694124, 1, 0.05),
        (11.070497693516351, 5, 0.05),
        (15.08627246938899, 5, 0.01),
        (20.515005652432873, 5, 0.001),
        (0.0, 5, 1.0),
    ],
)
def test_chi_square_p_value_matches_the_tables(statistic: float, freedom: int, p_value: float) -> None:
    assert chi_square_p_value(statistic, freedom) == pytest.approx(p_value, rel=1e-9, abs=1e-15)


def test_upper_gamma_has_closed_forms_to_check_against() -> None:
    for x in (0.1, 1.0, 2.5, 7.0, 40.0):
        assert regularized_upper_gamma(1.0, x) == pytest.approx(math.exp(-x), rel=1e-12)  # Q(1, x)
        assert regularized_upper_gamma(0.5, x) == pytest.approx(math.erfc(math.sqrt(x)), rel=1e-10)


# ------------------------------------------------------------------ dice


def test_dice_report_flags_a_loaded_die(tmp_path: Path) -> None:
    # a 6 twice as often as any other face: 86 of each of 1-5 and 172 sixes
    loaded = [face for face in range(1, 6) for _ in range(86)] + [6] * 172
    report = build_report(archive_of(tmp_path, {"loaded": (table_rolls(loaded), None)}), "dice")
    rows = {(row[0], row[1]): row for row in section_rows(report)}
    source, purpose, sides, rolls, faces, statistic, freedom, p_value, verdict = rows[("table", "wind")]
    assert (sides, rolls, faces, freedom, verdict) == (6, 602, "86 86 86 86 86 172", 5, "BIASED")
    expected = 602 / 6
    assert statistic == pytest.approx(
        5 * (86 - expected) ** 2 / expected + (172 - expected) ** 2 / expected, abs=1e-3
    )
    assert isinstance(p_value, float) and p_value < 1e-10
    assert rows[("table", "(all)")][4] == "86 86 86 86 86 172"
    assert any("BIASED" in note and "table/wind d6" in note for note in report.notes)


def test_dice_report_passes_exactly_uniform_faces(tmp_path: Path) -> None:
    fair = [face for face in range(1, 7) for _ in range(20)]
    report = build_report(archive_of(tmp_path, {"fair": (table_rolls(fair, "shot"), None)}), "dice")
    row = section_rows(report)[-1]
    assert row[1:] == ("shot", 6, 120, "20 20 20 20 20 20", 0.0, 5, 1.0, "fair")


def test_dice_report_passes_the_seeded_generator(tmp_path: Path) -> None:
    simulate(tmp_path / "games", 3, "fair", max_turns=20)
    archive_games(sorted((tmp_path / "games").glob("*.jsonl")), tmp_path / "a", "2026-03")
    report = build_report(tmp_path / "a", "dice")
    overall = next(row for row in section_rows(report) if row[:2] == ("seeded", "(all)"))
    rolls, p_value, verdict = overall[3], overall[7], overall[8]
    assert isinstance(rolls, int) and rolls > 500
    assert isinstance(p_value, float) and p_value > 0.01 and verdict == "fair"


def test_dice_report_says_too_few_rolls(tmp_path: Path) -> None:
    report = build_report(archive_of(tmp_path, {"few": (table_rolls([6, 6, 6]), None)}), "dice")
    assert section_rows(report)[0][-1] == "too few rolls"


# ------------------------------------------------------------------ gunnery


def shot(
    distance: int,
    cannons: int,
    hit: bool,
    mode: str = "normal",
    dice: tuple[int, ...] = (1, 2, 3),
    needed: int | str = 12,
    bonus: int = 0,
) -> ShotFired:
    return ShotFired(
        turn=1,
        ship="A",
        weapon="port",
        target="B",
        distance=distance,
        cannons=cannons,
        mode=mode,
        dice=dice,
        bonus=bonus,
        needed=needed,
        hit=hit,
        damage=0,
    )


def test_gunnery_report_compares_hit_rates_with_the_exact_odds(tmp_path: Path) -> None:
    # S3: 2 cannons at distance 3 need 12 on 3d6: 81/216 = 0.375. 3 hits in 8 shots.
    normal = [shot(3, 2, hit=i < 3) for i in range(8)]
    # S4 burst, 3 cannons at distance 5 need 14 on 3d6: 35/216; 2 hits in 4 shots.
    burst = [shot(5, 3, hit=i < 2, mode="burst", needed=14) for i in range(4)]
    # K catapult at distance 2 needs 9 on 3d6 with the S6 bonus 1 (so 8 or more): 181/216; one shot, missed.
    catapult = [shot(2, 0, hit=False, mode="catapult", needed=9, bonus=1)]
    report = build_report(archive_of(tmp_path, {"guns": ([*normal, *burst, *catapult], None)}), "gunnery")
    rows = {(row[0], row[1], row[2]): row for row in section_rows(report)}
    burst_odds = float(Fraction(35, 216))
    assert rows[("normal", 3, 2)] == ("normal", 3, 2, 8, 3, 0.375, 0.375, 0.0)
    z_burst = (2 - 4 * burst_odds) / math.sqrt(4 * burst_odds * (1 - burst_odds))
    assert rows[("burst", 5, 3)] == ("burst", 5, 3, 4, 2, 0.5, round(burst_odds, 4), round(z_burst, 2))
    catapult_odds = float(Fraction(181, 216))
    z_catapult = -catapult_odds / math.sqrt(catapult_odds * (1 - catapult_odds))
    assert rows[("catapult", 2, 0)] == (
        "catapult",
        2,
        0,
        1,
        0,
        0.0,
        round(catapult_odds, 4),
        round(z_catapult, 2),
    )


def test_gunnery_report_flags_a_rate_off_its_odds(tmp_path: Path) -> None:
    # 4 cannons at distance 4 need 10 on 3d6 (0.625); hitting 60 of 60 is far off it
    always = [shot(4, 4, hit=True, needed=10) for _ in range(60)]
    report = build_report(archive_of(tmp_path, {"lucky": (always, None)}), "gunnery")
    assert any("off the odds" in note and "normal d4 c4" in note for note in report.notes)


# ------------------------------------------------------------------ fire


def test_fire_report_counts_how_checks_end_by_phase(tmp_path: Path) -> None:
    bought = ShipBought(player="Anne", ship="A", kind="green-small", price=20000)

    def check(phase: str, die: int, out: bool, abandoned: bool, damage: int) -> FireChecked:
        following = None if out or abandoned else "2a"
        return FireChecked(
            turn=1,
            ship="A",
            phase=phase,
            die=die,
            out=out,
            damage=damage,
            next_phase=following,
            abandoned=abandoned,
        )

    body = [
        bought,
        check("1", 6, True, False, 0),
        check("1", 2, False, False, 5),
        check("1", 1, False, True, 10),
        check("2a", 3, False, False, 4),
    ]
    report = build_report(archive_of(tmp_path, {"fire": (body, None)}), "fire")
    assert section_rows(report) == [("1", 3, 1, 1, 1, 15, 3.0), ("2a", 1, 0, 0, 1, 4, 3.0)]


# ------------------------------------------------------------------ fleets


def test_fleets_report_win_rate_and_damage_per_1000(tmp_path: Path) -> None:
    def buy(player: str, ship: str, kind: str, price: int, options: tuple[str, ...] = ()) -> ShipBought:
        return ShipBought(player=player, ship=ship, kind=kind, price=price, options=options)

    def hurt(ship: str, amount: float, by: str) -> DamageTaken:
        return DamageTaken(
            turn=1, round=1, phase="combat", step=0, ship=ship, amount=amount, cause="shot", other=by
        )

    one = [
        buy("Anne", "A1", "blue-big", 50000, ("catapult", "catapult")),
        buy("Bart", "B1", "red-small", 10000),
        FleetEquipped(player="Bart", option="elite-gunner", price=5000),
        hurt("B1", 30, "A1"),
        hurt("A1", 10, "B1"),
        ShipSunk(turn=1, round=1, phase="combat", ship="B1", at=(0, 0)),
    ]
    two = [
        buy("Anne", "A2", "blue-big", 40000),
        buy("Bart", "B2", "red-small", 10000, ("siren",)),
        hurt("A2", 20, "B2"),
    ]
    report = build_report(archive_of(tmp_path, {"one": (one, "Anne"), "two": (two, "Bart")}), "fleets")
    # blue-big: 2 ships, 1 win of 2, 90,000 spent, 30 dealt -> 30 * 1000 / 90000; none lost
    assert section_rows(report, 0) == [
        ("blue-big", 2, 2, 0.5, 90000, 30.0, round(30 * 1000 / 90000, 4), 0.0),
        ("red-small", 2, 2, 0.5, 20000, 30.0, 1.5, 0.5),
    ]
    assert section_rows(report, 1) == [
        ("catapult", 1, 1, 1.0, 50000, 30.0, 0.6, 0.0),
        ("fleet:elite-gunner", 1, 1, 0.0, 10000, 10.0, 1.0, 1.0),
        ("siren", 1, 1, 1.0, 10000, 20.0, 2.0, 0.0),
    ]


# ------------------------------------------------------------------ rulings


def test_rulings_report_counts_rulings_per_rule(tmp_path: Path) -> None:
    bought = ShipBought(player="Anne", ship="A", kind="green-small", price=20000)
    fix = Adjustment(ship="A", damage=-5)
    one = [
        bought,
        RulingRecorded(turn=1, rule="C2", text="b wreck", adjustments=(fix,)),
        RulingRecorded(turn=2, rule="M3", text="push"),
    ]
    two = [RulingRecorded(turn=1, rule="C2", text="a wreck")]
    report = build_report(archive_of(tmp_path, {"one": (one, None), "two": (two, None)}), "rulings")
    assert section_rows(report) == [("C2", 2, 2, 1, "a wreck"), ("M3", 1, 1, 0, "push")]


# ------------------------------------------------------------------ empty archives and the CLI


def test_reports_on_an_empty_archive_say_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for name in ("dice", "gunnery", "fire", "fleets", "rulings"):
        result = run_cli("report", str(tmp_path / "empty"), name)
        assert result.exit_code == 0, result.output
        assert "the archive holds no game yet: nothing to report" in result.output


def test_a_report_with_nothing_to_count_says_so_and_writes_no_chart(tmp_path: Path) -> None:
    archive = archive_of(tmp_path, {"quiet": ((), None)})
    result = run_cli("report", str(archive), "rulings", "--svg", str(tmp_path / "r.svg"))
    assert result.exit_code == 0
    assert "the archive's 1 game(s) hold no ruling" in result.output
    assert not (tmp_path / "r.svg").exists()


def test_svg_chart_is_a_bar_per_row(tmp_path: Path) -> None:
    loaded = [face for face in range(1, 6) for _ in range(10)] + [6] * 20
    archive = archive_of(tmp_path, {"d": (table_rolls(loaded), None)})
    out = tmp_path / "dice.svg"
    result = run_cli("report", str(archive), "dice", "--svg", str(out))
    assert result.exit_code == 0 and "BIASED" not in result.output.split("faces by")[0]
    svg = ElementTree.parse(out).getroot()
    namespace = "{http://www.w3.org/2000/svg}"
    bars = [r for r in svg.iter(f"{namespace}rect") if r.get("fill") == "#4a7ab5"]
    ticks = list(svg.iter(f"{namespace}line"))
    assert len(bars) == 6 and len(ticks) == 6  # one per face, each with the fair share as a tick
    widths = [float(b.get("width", "0")) for b in bars]
    assert widths[5] == pytest.approx(2 * widths[0])


def test_unknown_report_is_refused(tmp_path: Path) -> None:
    assert run_cli("report", str(tmp_path), "weather").exit_code == 2


def test_chi_square_uniform_counts() -> None:
    assert chi_square_uniform([10, 10, 10]) == (0.0, 2, 1.0)
    statistic, freedom, p_value = chi_square_uniform([0, 0, 30])
    assert (statistic, freedom) == (60.0, 2) and p_value == pytest.approx(math.exp(-30))
