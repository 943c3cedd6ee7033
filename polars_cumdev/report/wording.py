"""The located stretch in words, for the headers of the HTML reports.

A screen-like row carries ``from_score``, ``to_score``, ``share`` and
``deviation`` (:mod:`polars_cumdev.method.location`); :func:`where_words` turns them
into one sentence in the user's terms, e.g. "log10_income 4.2 to 4.6, 18% of
the county's weight: 0.13 more has_internet than rows with the same score
overall", or "not located" when there is no stretch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from polars_cumdev.charts.numbers import number, p_text, percent

__all__ = ["how_to_read", "significance_heading", "where_words"]


def _ends(row: Mapping[str, object], covariates: Sequence[str], side: str) -> str:
    values = (row.get(f"{side}_{c}") for c in covariates)
    return "(" + ", ".join(number(v) if isinstance(v, int | float) else "?" for v in values) + ")"


def where_words(
    row: Mapping[str, object],
    keys: Sequence[str],
    score: str | Sequence[str],
    response: str,
    weighted: bool,
    *,
    kind: Literal["subpopulation", "calibration"] = "subpopulation",
) -> str:
    """One sentence saying where the group deviates and by how much.

    Parameters
    ----------
    row
        A row of ``screen`` (or ``calibration(by=...)``) with the location
        columns.
    keys
        The grouping columns: a single key names the group ("the county's").
    score, response
        The user's column names. A list ``score`` (covariates in Hilbert
        order) names the stretch's ends by their covariate values, read from
        the row's ``from_<covariate>`` and ``to_<covariate>`` columns.
    weighted
        Whether the share is of the weight (else of the rows).
    kind
        ``"subpopulation"``: the deviation is from rows with the same score
        in the full population; ``"calibration"``: the responses are above or
        below the scores (the predictions).

    Returns
    -------
    str
        The sentence, or ``"not located"`` (with the reason in ``note``).
    """
    start, end = row.get("from_score"), row.get("to_score")
    share, deviation = row.get("share"), row.get("deviation")
    if not all(isinstance(v, int | float) for v in (start, end, share, deviation)):
        return "not located"
    assert isinstance(start, int | float) and isinstance(end, int | float)
    assert isinstance(share, int | float) and isinstance(deviation, int | float)
    owner = f"the {keys[0]}'s" if len(keys) == 1 else "the group's"
    whole = f"{owner} weight" if weighted else f"{owner} rows"
    if isinstance(score, str):
        span = f"{score} {number(start)} to {number(end)}"
    else:
        span = f"({', '.join(score)}) from {_ends(row, score, 'from')} to {_ends(row, score, 'to')}"
    where = f"{span}, {percent(share)} of {whole}"
    size = f"{abs(deviation):.3g}"
    if kind == "calibration":
        side = "above" if deviation > 0 else "below"
        return f"{where}: {response} {size} {side} the {score} on average"
    more = "more" if deviation > 0 else "less"
    same = "score" if isinstance(score, str) else "covariates"
    return f"{where}: {size} {more} {response} than rows with the same {same} overall"


def significance_heading(q: float | None, level: float, symbol: str = "q") -> str:
    """A section heading's words for a group that is not significant: "not significant: q = 0.72".

    ``q`` above ``level`` (or undefined); no stretch and no "more" or "less"
    is stated for such a group (:mod:`polars_cumdev.method.findings`).
    """
    if q is None or q != q:  # null or NaN
        return f"not significant: {symbol} undefined"
    return f"not significant: {symbol} = {p_text(q)} > {level:g}"


_SUBJECT = {
    "subpopulation": (
        "the group's responses minus the full population's at the same score",
        "the group's responses are higher than those of the full population at the same "
        "scores; where it falls, lower",
    ),
    "calibration": (
        "the responses minus the predicted probabilities (the scores)",
        "the outcomes exceed the predictions; where it falls, the predictions are too high",
    ),
}


def how_to_read(kind: Literal["subpopulation", "calibration"], level: float) -> str:
    """The reports' short guide, as escaped HTML: slope, triangle, band, q and the level."""
    accumulated, rising = _SUBJECT[kind]
    items = [
        f"<b>The curve</b> accumulates {accumulated}, from the lowest score to the highest. "
        "Its <b>slope</b> over a range of scores is the average difference there: where the "
        f"curve rises, {rising}. A flat curve means no difference.",
        "<b>The triangle</b> at the origin has height 4 sigma (plus and minus 2 sigma): a rise "
        "or fall of the whole curve no taller than it is what noise alone typically gives.",
        "<b>The band</b>, where drawn, is the Kolmogorov-Smirnov band: the curve leaves it "
        "exactly when its deviation is significant at the band's level.",
        "<b>p</b> is the chance of a Kuiper range D at least this large if the group did not "
        "deviate; <b>q</b> is p adjusted (Benjamini-Hochberg) for screening many groups at once.",
        f"<b>Findings.</b> A stretch of scores is named, and shaded on the plot, only for a "
        f"group with q &le; {level:g}; any other group is marked <i>not significant</i> and "
        "no stretch is stated for it, however large it looks.",
    ]
    body = "".join(f"<li>{item}</li>" for item in items)
    return f'<div class="guide"><h2>How to read this page</h2><ul>{body}</ul></div>'
