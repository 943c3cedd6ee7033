"""Writing charts to files: Vega-Lite JSON, SVG, PNG, PDF or self-contained HTML.

Rendering uses ``vl-convert`` (no browser, no network). HTML pages inline
the Vega, Vega-Lite and Vega-Embed JavaScript, so they open offline; the
interactive zoom of the cumulative plot works there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import altair as alt

from polars_cumdev.errors import InvalidParameterError

__all__ = ["SUFFIXES", "json_for_script", "save", "to_spec", "xml_safe"]

#: File suffixes :func:`save` understands.
SUFFIXES = (".json", ".svg", ".png", ".pdf", ".html")
_REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc\s*=\s*[\"']?\s*(https?:)?//", re.IGNORECASE)
# Characters XML 1.0 forbids: the renderer aborts the whole process (a Rust panic in
# vl-convert) on a label holding one. C0 controls become their Unicode control pictures
# (U+2400 + code, visible and unambiguous); the two non-characters become U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_safe_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else "\ufffd"


def xml_safe(value: Any) -> Any:
    """``value`` with every string in it (keys too, recursively) made legal in XML.

    Group keys are user data and reach chart labels and tooltips verbatim; a NUL or
    another C0 control character in one would abort the process when the chart is
    rendered. Each such character becomes its Unicode control picture (NUL -> U+2400),
    so the label stays readable and distinct keys stay distinct.
    """
    if isinstance(value, str):
        return _NOT_XML.sub(_xml_safe_char, value)
    if isinstance(value, dict):
        return {xml_safe(key): xml_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [xml_safe(item) for item in value]
    return value


# Inside a <script> element the HTML parser ends the script at "</script" and treats
# "<!--" specially, whatever the JavaScript means; U+2028/2029 end a line in older
# JavaScript. JSON may write each of these as a \u escape inside a string (and none
# occurs outside one), so escaping them leaves the same value and no way out.
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                  "\u2029": "\\u2029"}  # fmt: skip
_SCRIPT_UNSAFE_CHARS = re.compile("[<>&\u2028\u2029]")


def json_for_script(spec: Any) -> str:
    """JSON of ``spec`` safe to paste inside an HTML ``<script>`` element.

    Group keys are user data; a key such as ``</script><script>...`` written
    raw would end the page's script and run its own. Every ``<``, ``>``, ``&``,
    U+2028 and U+2029 is written as its ``\\uXXXX`` escape, which JSON (and
    JavaScript) read back as the same character.
    """
    text = json.dumps(spec, allow_nan=False, default=str)
    return _SCRIPT_UNSAFE_CHARS.sub(lambda m: _SCRIPT_UNSAFE[m.group()], text)


def _html_page(spec: dict[str, Any], version: str | None) -> str:
    """A self-contained page drawing ``spec``: vl-convert's head (the inlined libraries).

    The head comes from vl-convert rendering a spec without data, so that no
    user string can reach it; the body holding the spec is written here, its
    JSON escaped by :func:`json_for_script` (vl-convert pastes the spec raw).
    """
    import vl_convert

    blank = {key: spec[key] for key in ("$schema",) if key in spec}
    blank.update({"data": {"values": []}, "mark": "point"})
    page = vl_convert.vegalite_to_html(blank, vl_version=version, bundle=True)
    head, found, tail = page.rpartition("<body>")  # the bundle itself holds "<body>" too
    shape = found and 'id="vega-chart"' in tail and not _REMOTE_SCRIPT.search(head)
    if not shape:  # pragma: no cover - guards a vl-convert change
        raise RuntimeError("vl-convert produced an HTML page of an unexpected shape")
    return (
        f"{head}<body>\n"
        '    <div id="vega-chart"></div>\n'
        '    <script type="text/javascript">\n'
        f"      const spec = {json_for_script(spec)};\n"
        "      vegaEmbed('#vega-chart', spec, {renderer: 'svg'}).catch(console.error);\n"
        "    </script>\n"
        "  </body>\n"
        "</html>\n"
    )


def to_spec(chart: alt.TopLevelMixin | dict[str, Any]) -> dict[str, Any]:
    """Return the Vega-Lite specification of ``chart`` as a dict, on a white background.

    Parameters
    ----------
    chart
        An Altair chart or an already serialized Vega-Lite dict.

    Returns
    -------
    dict
        A new dict (the input is not modified).

    Raises
    ------
    InvalidParameterError
        If ``chart`` is neither an Altair chart nor a dict.
    """
    if isinstance(chart, dict):
        spec = dict(chart)
    elif isinstance(chart, alt.TopLevelMixin):
        spec = chart.to_dict()
    else:
        raise InvalidParameterError(f"expected an Altair chart or a dict, got {type(chart)!r}")
    spec.setdefault("background", "white")
    return spec


def _vl_version(spec: dict[str, Any]) -> str | None:
    """``vN.M`` named by the spec's ``$schema`` when vl-convert bundles it, else latest."""
    import vl_convert

    match = re.search(r"/v(\d+)\.(\d+)", str(spec.get("$schema", "")))
    if match is None:
        return None
    wanted = f"{match.group(1)}.{match.group(2)}"
    return f"v{wanted}" if wanted in vl_convert.get_vegalite_versions() else None


def save(
    chart: alt.TopLevelMixin | dict[str, Any], path: str | Path, *, scale: float = 1.0
) -> Path:
    """Write ``chart`` to ``path``, choosing the format from the suffix.

    Parameters
    ----------
    chart
        An Altair chart (or a Vega-Lite spec dict).
    path
        Destination; its suffix (case-insensitive) picks the format:
        ``.json`` (Vega-Lite spec), ``.svg``, ``.png``, ``.pdf``, or
        ``.html`` (self-contained, all JavaScript inlined).
    scale
        Resolution multiplier for ``.png`` (ignored otherwise: SVG and PDF
        are vector formats).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    InvalidParameterError
        If the suffix is not one of :data:`SUFFIXES`, or ``scale`` is not
        a positive number.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in SUFFIXES:
        raise InvalidParameterError(
            f"cannot save a chart as {target.name!r}: the suffix must be one of {SUFFIXES}"
        )
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise InvalidParameterError(f"`scale` must be a positive number, got {scale!r}")
    spec = to_spec(chart)
    if suffix == ".json":
        target.write_text(json.dumps(spec, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return target

    import vl_convert

    spec = xml_safe(spec)
    version = _vl_version(spec)
    if suffix == ".svg":
        target.write_text(vl_convert.vegalite_to_svg(spec, vl_version=version), encoding="utf-8")
    elif suffix == ".png":
        target.write_bytes(vl_convert.vegalite_to_png(spec, vl_version=version, scale=scale))
    elif suffix == ".pdf":
        target.write_bytes(vl_convert.vegalite_to_pdf(spec, vl_version=version))
    else:
        target.write_text(_html_page(spec, version), encoding="utf-8")
    return target
