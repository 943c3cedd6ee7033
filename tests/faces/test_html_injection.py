"""Group keys cannot run code in a reader's browser, nor rewrite the terminal (issue 37, item 7).

A group named ``</script><script>...</script>`` went raw into the page written
by ``charts.save(..., "x.html")``, ``cumdev screen --out x.html`` and the
funnel chart's HTML (vl-convert pastes the spec unescaped into a ``<script>``).
The spec is now written with ``<``, ``>``, ``&``, U+2028 and U+2029 as JSON
escapes. The pages are opened in real headless Chromium: no injected script
runs (it would mark the page), and every chart is still drawn with the key as
its text. The command also printed NUL characters of keys raw: they now show
as control pictures.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_cumdev import charts
from polars_cumdev.charts.export import json_for_script
from polars_cumdev.cli import main
from polars_cumdev.multicalibration import multicalibration, segments

# Each payload, if it ran, would mark the page's <html> element.
MARK = "document.documentElement.setAttribute('data-pwned','1')"
KEYS = [
    f"</script><script>{MARK}</script>",
    f"<!--<script>{MARK}</script>",
    f'</SCRIPT ><img src=x onerror="{MARK}">',
    "a & b \u2028 \u2029 ok",
]


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    n = 1200
    s = rng.uniform(size=n)
    g = rng.choice(len(KEYS), size=n)
    r = (rng.uniform(size=n) < s + 0.15 * (g == 0)).astype(np.float64)
    return pl.DataFrame({"g": np.array(KEYS, dtype=object)[g].tolist(), "s": s, "r": r})


@pytest.fixture(scope="module")
def pages(frame: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("html")
    table = frame.cumdev.screen("g", "s", "r")
    out = {"screen": folder / "screen.html", "curve": folder / "curve.html"}
    charts.save(charts.screen(table, by=["g"]), out["screen"])
    points = frame.cumdev.curve(pl.col("g") == KEYS[0], "s", "r")
    charts.save(charts.cumulative(points, subject=f"g = {KEYS[0]}"), out["curve"])
    audit = multicalibration(frame, "s", "r", segments=segments(["g"], depth=1))
    out["funnel"] = folder / "funnel.html"
    charts.save(charts.funnel(audit), out["funnel"])
    data = folder / "data.parquet"
    frame.write_parquet(data)
    out["cli"] = folder / "cli.html"
    argv = ["screen", str(data), "--by", "g", "--score", "s", "--response", "r"]
    assert main([*argv, "--out", str(out["cli"])]) == 0
    return out


def _spec(page: str) -> dict:
    (text,) = re.findall(r"const spec = (.*);\n", page)
    return json.loads(text)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["screen", "curve", "funnel", "cli"])
def test_no_key_reaches_the_page_raw(pages: dict[str, Path], name: str) -> None:
    page = pages[name].read_text(encoding="utf-8")
    head, _, body = page.rpartition("<body>")
    assert "document.documentElement" not in head  # the libraries' head holds no user data
    assert "<script>document" not in body and "<img" not in body and "<!--" not in body
    assert body.count("<script") == 1 and body.count("</script>") == 1
    # The spec still holds the keys themselves: the chart shows them as written.
    spec = json.dumps(_spec(page))
    assert any(json.dumps(key)[1:-1] in spec for key in KEYS)


def test_json_for_script_escapes_what_ends_a_script() -> None:
    value = {"k": "</script><!-- & \u2028\u2029 >"}
    text = json_for_script(value)
    assert not set(text) & set("<>&\u2028\u2029")
    assert json.loads(text) == value


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow  # a real browser: about 3 s a page
@pytest.mark.parametrize("name", ["screen", "funnel", "cli"])
def test_chromium_runs_no_injected_script_and_draws_the_chart(
    pages: dict[str, Path], name: str
) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium on this machine (.ci/run installs it)")
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--dump-dom",
             pages[name].as_uri()],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    assert "data-pwned" not in dom.split(">", 2)[1]  # the <html> element was not marked
    assert 'data-pwned="1"' not in dom
    assert re.search(r'<svg[^>]*class="marks"', dom), dom[-2000:]  # Vega drew the chart
    if name != "funnel":  # the screen's labels are the keys, drawn as text
        assert "&lt;/script&gt;&lt;script&gt;" in dom


def test_the_command_shows_nul_and_escape_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(8)
    n = 400
    keys = np.array(["a\x00b", "c\x1b[31md", "e\rf"], dtype=object)
    frame = pl.DataFrame(
        {"g": keys[rng.choice(3, size=n)].tolist(), "s": rng.uniform(size=n)}
    ).with_columns(r=(pl.Series(rng.uniform(size=n)) < pl.col("s")).cast(pl.Float64))
    frame.write_parquet(tmp_path / "d.parquet")
    argv = ["screen", str(tmp_path / "d.parquet"), "--by", "g", "--score", "s", "--response", "r"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "\x00" not in out and "\x1b" not in out and "\r" not in out
    assert "a\u2400b" in out and "c\u241b[31md" in out and "e\u240df" in out
