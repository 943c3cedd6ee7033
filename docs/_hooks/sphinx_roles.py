"""MkDocs hook: drop Sphinx cross-reference roles from rendered docstrings.

The package's docstrings use Sphinx roles such as :func:`name`; mkdocstrings
renders them as ":func:" followed by inline code. This hook keeps the code and
removes the role prefix. It runs locally and fetches nothing.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const|term):(?=<code)")


def on_page_content(html: str, **kwargs: object) -> str:
    return _ROLE.sub("", html)
