"""``report``: the game designer's built-in questions over an archive, as tables and SVG bar charts.

* ``dice``: observed faces per source and purpose against the uniform distribution (chi-square);
  a loaded table die or a broken generator shows up as a tiny p-value.
* ``gunnery``: hit rate by mode, distance and cannons against the exact odds of S3, S4 and K.
* ``fire``: how fire checks end (X1), by fire phase.
* ``fleets``: win rate and damage dealt per 1,000 spent, by ship kind and by option.
* ``rulings``: rulings per rule ID: which rules cause disputes.

The SQL runs on the same read-only connection as ``query``; the statistics (chi-square survival
function, exact odds) are computed here, with no dependency beyond the standard library.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from mortecouille.core.errors import BadInput, MortecouilleError
from mortecouille.core.mortecouille.gunnery import (
    CATAPULT_DICE,
    DICE_FOR_CANNONS,
    catapult_hit_probability,
    hit_probability,
)
from mortecouille.replays.analytics.query import (
    QueryResult,
    archive_views,
    format_table,
    read_only_connection,
)
from mortecouille.replays.pictures.svg import xml_text

if TYPE_CHECKING:
    import duckdb

#: p-values below this flag a distribution as biased (dice) or a rate as off its odds (gunnery).
BIAS_P_VALUE = 0.001
#: Chi-square needs about five expected counts per face to be trusted (Cochran's rule).
MIN_EXPECTED_PER_FACE = 5.0


class Bar(msgspec.Struct, frozen=True):
    label: str
    value: float
    #: what the value should be (expected frequency, exact odds), drawn as a tick
    reference: float | None = None


class Chart(msgspec.Struct, frozen=True):
    title: str
    value_label: str
    bars: list[Bar]


class Section(msgspec.Struct, frozen=True):
    title: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


class Report(msgspec.Struct, frozen=True):
    name: str
    title: str
    sections: list[Section] = []
    notes: list[str] = []
    chart: Chart | None = None
    #: set when there is nothing to report on: the message says why
    empty: str | None = None


# ------------------------------------------------------------------ statistics


def regularized_upper_gamma(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a), by its series below a + 1 and its continued fraction above
    (Numerical Recipes, gser/gcf), accurate to ~1e-14: enough for any p-value worth printing."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x <= 0:
        return 1.0
    log_prefactor = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        denominator = a
        for _ in range(10_000):
            denominator += 1
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return min(1.0, math.exp(log_prefactor) * h)


def chi_square_p_value(statistic: float, degrees_of_freedom: int) -> float:
    """P(X >= statistic) for X chi-square with ``degrees_of_freedom``: Q(df/2, statistic/2)."""
    return regularized_upper_gamma(degrees_of_freedom / 2, statistic / 2)


def chi_square_uniform(counts: Sequence[int]) -> tuple[float, int, float]:
    """(statistic, degrees of freedom, p-value) of ``counts`` against equal expected counts."""
    total = sum(counts)
    expected = total / len(counts)
    statistic = sum((observed - expected) ** 2 / expected for observed in counts) if total else 0.0
    freedom = len(counts) - 1
    return statistic, freedom, chi_square_p_value(statistic, freedom)


# ------------------------------------------------------------------ reports


def _rows(connection: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    return connection.execute(sql).fetchall()


def _count(connection: duckdb.DuckDBPyConnection, table: str) -> int:
    return int(_rows(connection, f"SELECT count(*) FROM {table}")[0][0])


def _empty(
    connection: duckdb.DuckDBPyConnection, name: str, title: str, table: str, what: str
) -> Report | None:
    games = _count(connection, "games")
    if games == 0:
        return Report(name, title, empty="the archive holds no game yet: nothing to report")
    if _count(connection, table) == 0:
        return Report(name, title, empty=f"the archive's {games} game(s) hold no {what}: nothing to report")
    return None


def _verdict(p_value: float, expected_per_face: float) -> str:
    if expected_per_face < MIN_EXPECTED_PER_FACE:
        return "too few rolls"
    if p_value < BIAS_P_VALUE:
        return "BIASED"
    if p_value < 0.01:
        return "suspicious"
    return "fair"


def dice_report(connection: duckdb.DuckDBPyConnection) -> Report:
    title = "Dice faces against a fair die (chi-square, uniform faces)"
    empty = _empty(connection, "dice", title, "dice", "die roll")
    if empty is not None:
        return empty
    faces: dict[tuple[str, str, int], list[int]] = {}
    for source, purpose, sides, value, count in _rows(
        connection,
        "SELECT source, purpose, sides, value, count(*) FROM dice GROUP BY ALL ORDER BY ALL",
    ):
        for key in ((source, purpose, sides), (source, "(all)", sides)):
            counts = faces.setdefault(key, [0] * sides)
            if 1 <= value <= sides:
                counts[value - 1] += count
    rows = []
    bars = []
    flagged = []
    for (source, purpose, sides), counts in sorted(faces.items()):
        statistic, freedom, p_value = chi_square_uniform(counts)
        rolls = sum(counts)
        verdict = _verdict(p_value, rolls / sides)
        rows.append(
            (
                source,
                purpose,
                sides,
                rolls,
                " ".join(str(c) for c in counts),
                round(statistic, 3),
                freedom,
                float(f"{p_value:.4g}"),
                verdict,
            )
        )
        if verdict == "BIASED":
            flagged.append(f"{source}/{purpose} d{sides}")
        if purpose == "(all)":
            bars += [
                Bar(f"{source} d{sides}: {face}", counts[face - 1] / rolls, 1 / sides)
                for face in range(1, sides + 1)
            ]
    notes = [
        f"BIASED: p < {BIAS_P_VALUE} that a fair die shows faces this uneven: {', '.join(flagged)}"
        if flagged
        else f"no source or purpose is biased at p < {BIAS_P_VALUE}",
        f"'too few rolls': under {MIN_EXPECTED_PER_FACE:g} expected per face, the test is not trusted",
    ]
    columns = ("source", "purpose", "sides", "rolls", "faces 1..n", "chi2", "df", "p", "verdict")
    return Report(
        "dice",
        title,
        sections=[Section("faces by source and purpose", columns, rows)],
        notes=notes,
        chart=Chart("Face frequency by source (tick: fair)", "share of rolls", bars),
    )


def shot_probability(mode: str, distance: int, cannons: int, dice: int, bonus: int) -> Fraction | None:
    """Exact chance of one logged shot from the S3/S4/K tables (elite gunner: one die more than
    the table's count), or None when the tables do not cover it."""
    try:
        if mode == "catapult":
            return catapult_hit_probability(distance, elite=dice > CATAPULT_DICE, bonus=bonus)
        elite = dice > DICE_FOR_CANNONS.get(cannons, dice)
        return hit_probability(cannons, distance, burst=mode == "burst", elite=elite, bonus=bonus)
    except MortecouilleError:
        return None


def gunnery_report(connection: duckdb.DuckDBPyConnection) -> Report:
    title = "Hit rate against the exact odds (S3 normal, S4 burst, K catapult)"
    empty = _empty(connection, "gunnery", title, "shots", "shot")
    if empty is not None:
        return empty
    groups: dict[tuple[str, int, int], list[float]] = defaultdict(lambda: [0, 0, 0.0, 0.0, 0])
    for mode, distance, cannons, dice, bonus, shots, hits in _rows(
        connection,
        "SELECT mode, distance, cannons, len(dice), bonus, count(*), sum(CAST(hit AS INTEGER)) "
        "FROM shots GROUP BY ALL",
    ):
        group = groups[(mode, distance, cannons)]
        group[0] += shots
        group[1] += hits
        probability = shot_probability(mode, distance, cannons, dice, bonus)
        if probability is None:
            group[4] += shots
        else:
            group[2] += shots * float(probability)
            group[3] += shots * float(probability * (1 - probability))
    rows = []
    bars = []
    off = []
    for (mode, distance, cannons), (shots, hits, expected, variance, unknown) in sorted(groups.items()):
        known = shots - unknown
        expected_rate = expected / known if known else None
        z_score = (hits - expected) / math.sqrt(variance) if variance > 0 and not unknown else None
        rows.append(
            (
                mode,
                distance,
                cannons,
                int(shots),
                int(hits),
                round(hits / shots, 4),
                None if expected_rate is None else round(expected_rate, 4),
                None if z_score is None else round(z_score, 2),
            )
        )
        label = f"{mode} d{distance}" + ("" if mode == "catapult" else f" c{cannons}")
        bars.append(Bar(label, hits / shots, expected_rate))
        if z_score is not None and abs(z_score) > 3.29:  # two-sided p < 0.001
            off.append(label)
    notes = [
        "expected: mean exact chance of the shots in the row (dice, elite gunner and S6 bonus as logged)",
        f"off the odds (|z| > 3.29, p < {BIAS_P_VALUE}): {', '.join(off)}"
        if off
        else "every row is within its odds (|z| <= 3.29)",
    ]
    columns = ("mode", "distance", "cannons", "shots", "hits", "hit rate", "expected", "z")
    return Report(
        "gunnery",
        title,
        sections=[Section("shots by mode, distance and cannons", columns, rows)],
        notes=notes,
        chart=Chart("Hit rate (tick: exact odds)", "hit rate", bars),
    )


def fire_report(connection: duckdb.DuckDBPyConnection) -> Report:
    title = "How fire checks end, by fire phase (X1)"
    empty = _empty(connection, "fire", title, "fires", "fire check")
    if empty is not None:
        return empty
    rows = [
        (phase, checks, out, abandoned, burning, damage, round(mean_die, 3))
        for phase, checks, out, abandoned, burning, damage, mean_die in _rows(
            connection,
            "SELECT phase, count(*), count(*) FILTER (out), count(*) FILTER (abandoned), "
            "count(*) FILTER (NOT out AND NOT abandoned), sum(damage), avg(die) "
            "FROM fires GROUP BY phase ORDER BY phase",
        )
    ]
    columns = ("phase", "checks", "put out", "abandoned", "still burning", "damage", "mean die")
    bars = [Bar(f"{row[0]}: put out", row[2] / row[1]) for row in rows]
    return Report(
        "fire",
        title,
        sections=[Section("fire checks by phase", columns, rows)],
        chart=Chart("Share of fire checks that put the fire out", "share", bars),
    )


_FLEET_COLUMNS = (
    "count(*), count(DISTINCT game), avg(CAST(won AS INTEGER)), sum(price), sum(damage_dealt), "
    "1000 * sum(damage_dealt) / nullif(sum(price), 0), avg(CAST(status <> 'afloat' AS INTEGER))"
)


def fleets_report(connection: duckdb.DuckDBPyConnection) -> Report:
    title = "Fleets: win rate and damage dealt per 1,000 spent"
    empty = _empty(connection, "fleets", title, "ships", "ship")
    if empty is not None:
        return empty
    by_kind = _rows(
        connection,
        f"SELECT kind, {_FLEET_COLUMNS} FROM ships WHERE owner IS NOT NULL GROUP BY kind ORDER BY kind",
    )
    by_option = _rows(
        connection,
        # one row per ship and option it carries (a repeated option, say two catapults, counts once)
        f"SELECT option, {_FLEET_COLUMNS} FROM ("
        "SELECT *, unnest(list_distinct(options)) AS option FROM ships WHERE owner IS NOT NULL "
        "UNION ALL BY NAME "
        "SELECT *, 'fleet:' || unnest(list_distinct(fleet_options)) AS option FROM ships "
        "WHERE owner IS NOT NULL) GROUP BY option ORDER BY option",
    )

    def shaped(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [
            (
                key,
                ships,
                games,
                round(win_rate, 4),
                spent,
                round(dealt, 3),
                None if per_1000 is None else round(per_1000, 4),
                round(lost, 4),
            )
            for key, ships, games, win_rate, spent, dealt, per_1000, lost in rows
        ]

    tail = ("ships", "games", "win rate", "spent", "damage dealt", "dealt per 1000", "lost rate")
    return Report(
        "fleets",
        title,
        sections=[
            Section("by ship kind", ("kind", *tail), shaped(by_kind)),
            Section(
                "by option (fleet:X: a fleet option covering the ship)", ("option", *tail), shaped(by_option)
            ),
        ],
        notes=[
            "win rate: share of the ships whose owner won (a draw counts as not won)",
            "spent: ship and individual options (F1, F2); damage dealt: losses naming the ship as cause",
        ],
        chart=Chart(
            "Damage dealt per 1,000 spent, by ship kind",
            "damage per 1000",
            [Bar(str(row[0]), float(row[6] or 0.0)) for row in by_kind],
        ),
    )


def rulings_report(connection: duckdb.DuckDBPyConnection) -> Report:
    title = "Rulings per rule: which rules cause disputes"
    empty = _empty(connection, "rulings", title, "rulings", "ruling")
    if empty is not None:
        return empty
    rows = _rows(
        connection,
        "SELECT rule, count(*) AS rulings, count(DISTINCT game), sum(adjustments), min(text) "
        "FROM rulings GROUP BY rule ORDER BY rulings DESC, rule",
    )
    columns = ("rule", "rulings", "games", "adjustments", "example")
    return Report(
        "rulings",
        title,
        sections=[Section("rulings by rule ID", columns, rows)],
        chart=Chart("Rulings per rule", "rulings", [Bar(str(r[0]), float(r[1])) for r in rows]),
    )


REPORTS: dict[str, Callable[[duckdb.DuckDBPyConnection], Report]] = {
    "dice": dice_report,
    "gunnery": gunnery_report,
    "fire": fire_report,
    "fleets": fleets_report,
    "rulings": rulings_report,
}


def build_report(archive: Path, name: str) -> Report:
    if name not in REPORTS:
        raise BadInput("report", "{name!r} is not a report: {reports}", name=name, reports=", ".join(REPORTS))
    if not archive.is_dir():
        raise BadInput("archive", "{archive} is not an archive directory", archive=archive)
    with read_only_connection(archive_views(archive), archive) as connection:
        return REPORTS[name](connection)


# ------------------------------------------------------------------ rendering


def render_text(report: Report) -> str:
    lines = [report.title, ""]
    if report.empty is not None:
        return "\n".join([*lines, report.empty])
    for section in report.sections:
        lines += [section.title, format_table(QueryResult(section.columns, section.rows)), ""]
    lines += [f"- {note}" for note in report.notes]
    return "\n".join(lines).rstrip()


def render_svg(chart: Chart) -> str:
    """A horizontal bar chart as an SVG string: one bar per row, the reference as a red tick."""
    row_height, label_width, bar_width, margin = 22, 240, 420, 12
    top = 40
    height = top + row_height * max(len(chart.bars), 1) + margin
    width = label_width + bar_width + 90
    scale_max = max([b.value for b in chart.bars] + [b.reference or 0.0 for b in chart.bars] + [1e-12])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{margin}" y="20" font-size="14" font-weight="bold">{xml_text(chart.title)}</text>',
        f'<text x="{label_width}" y="34" fill="#555">{xml_text(chart.value_label)}</text>',
    ]
    for index, bar in enumerate(chart.bars):
        y = top + index * row_height
        length = bar_width * max(bar.value, 0.0) / scale_max
        label = xml_text(bar.label)
        parts.append(f'<text x="{label_width - 6}" y="{y + 15}" text-anchor="end">{label}</text>')
        parts.append(
            f'<rect x="{label_width}" y="{y + 3}" width="{length:.1f}" height="{row_height - 6}" '
            'fill="#4a7ab5"/>'
        )
        parts.append(f'<text x="{label_width + length + 4:.1f}" y="{y + 15}">{bar.value:.4g}</text>')
        if bar.reference is not None:
            x = label_width + bar_width * bar.reference / scale_max
            parts.append(
                f'<line x1="{x:.1f}" y1="{y + 1}" x2="{x:.1f}" y2="{y + row_height - 1}" '
                'stroke="#c0392b" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
