"""Every equation number a docstring cites names its paper.

"(49)" alone does not say which paper's (49): the five papers number their
equations independently. In every docstring of the package, each equation
reference (``(12)``, ``equations (44)-(50)``) must have a paper's title
before it in the same docstring, or right after it in the same citation
("(3)-(4) of Arrieta-Ibarra et al., "Metrics of ...""). The titles are those
of the papers in /work/shared/papers (see docs/method.md's references).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "polars_cumdev"

TITLES = (
    "Cumulative deviation of a subpopulation from the full population",
    "Plots of the cumulative differences between observed and expected values of ordered "
    "Bernoulli variates",
    "Metrics of calibration for probabilistic predictions",
    "Controlling for multiple covariates",
    "Cumulative differences between paired samples",
)

#: An equation number: a parenthesized integer not part of a call or an index.
EQUATION = re.compile(r"(?<![\w.\[])\((\d{1,3})\)")
#: How far after a number its citation may begin to name the paper.
AFTER = 160


def docstrings() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_docstring(node, clean=False)
                if text:
                    name = getattr(node, "name", "<module>")
                    found.append((f"{path.relative_to(PACKAGE.parent)}:{name}", text))
    return found


def uncited(text: str) -> list[str]:
    """The equation numbers of ``text`` with no paper title before or right after them."""
    flat = " ".join(text.split()).lower()
    titles = [t.lower() for t in TITLES]
    bare = []
    for match in EQUATION.finditer(flat):
        # the title before the number, or beginning at most AFTER characters after it
        if not any(title in flat[: match.end() + AFTER + len(title)] for title in titles):
            bare.append(flat[max(0, match.start() - 40) : match.end() + 20])
    return bare


def test_the_checker_tells_cited_from_bare() -> None:
    assert uncited("The Kuiper statistic (13).") != []
    assert uncited('Kuiper D, (13) of M. Tygert, "Cumulative deviation of a subpopulation\n'
                   '    from the full population".') == []  # fmt: skip
    assert uncited('In "Controlling for multiple covariates", then (4) and (5).') == []
    assert uncited("f(1) and x[(2)] and (0, 1) and (1 - p)") == []


@pytest.mark.slow  # parses every module: about a second
def test_every_equation_number_names_its_paper() -> None:
    bare = {name: found for name, text in docstrings() if (found := uncited(text))}
    listing = "\n".join(f"{name}: {found[0]!r}" for name, found in sorted(bare.items()))
    assert not bare, f"{len(bare)} docstrings cite equations without the paper:\n{listing}"
