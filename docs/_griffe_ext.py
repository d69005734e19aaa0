"""Griffe extensions for the API reference (mkdocs.yml: ``extensions``), in four parts.

1. ``mechanisms/`` documented as ``dpverify.mechanisms``. A wheel installs the top-level folder
   ``mechanisms/`` as the subpackage ``dpverify.mechanisms`` (``package-dir`` in pyproject.toml), as
   does the editable install of a checkout. Griffe reads source files statically and finds no
   ``dpverify/mechanisms/`` on disk, so when it loads ``dpverify`` this extension loads the folder
   (found on the handler's ``paths``) and attaches it as the member ``mechanisms``: every object in
   it then has its installed path, ``dpverify.mechanisms.<module>.<name>``. Nothing is imported.
2. Sphinx roles in docstring prose (``:func:`verify```, ``:class:`~dpverify.errors.MechanismError```)
   shown as inline code (``verify``, ``MechanismError``) instead of as raw role markup; a ``~``
   keeps the last component only, as Sphinx does.
3. reST literal blocks (a paragraph ending in ``::``, then an indented block) as Markdown: the
   indented block is already a code block in Markdown, so only the marker goes, as reST renders it:
   ``text::`` becomes ``text:``, and a ``::`` on its own (or after a space) disappears.
4. An item of an Args/Attributes section whose description starts with a comparison
   (``epsilon: >= 0``) keeps its ``>``: Markdown would read a line starting with ``>`` as a quote.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: ``::`` ending a line that an indented block follows (after blank lines).
_LITERAL = re.compile(r"(\S?)( ?)::\n(?=(?:[ \t]*\n)+[ \t]+\S)")
#: an indented ``name: `` (or ``name (type): ``) item whose description starts with ``>``.
_QUOTE = re.compile(r"(?m)^([ \t]+[\w*][\w, *]*(?: \([^)]*\))?: )>")
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const|term):`([^`]+)`")


def _as_code(match: re.Match[str]) -> str:
    target = match.group(1).strip()
    titled = re.fullmatch(r"(.+?)\s*<[^>]+>", target)  # :func:`text <target>`
    if titled:
        return f"`{titled.group(1)}`"
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    return f"`{target}`"


class MechanismsAsSubpackage(griffe.Extension):
    """Attach the checkout's ``mechanisms/`` folder to the ``dpverify`` package griffe loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != "dpverify" or "mechanisms" in pkg.members:  # an installed wheel has it already
            return
        mechanisms = loader.load("mechanisms")
        del loader.modules_collection["mechanisms"]  # known only under its installed name
        pkg.set_member("mechanisms", mechanisms)


class SphinxRolesAsCode(griffe.Extension):
    """Rewrite ``:role:`target``` in every docstring as inline code."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_as_code, obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        self.on_object(obj=pkg, loader=loader)  # griffe runs on_object for every object but the package


def _literal_marker(match: re.Match[str]) -> str:
    before, space = match.group(1), match.group(2)
    return f"{before}:\n" if before and not space else f"{before}\n"


class ReSTLiteralBlocks(griffe.Extension):
    """Rewrite the reST literal-block marker ``::`` in every docstring as Markdown reads it."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _LITERAL.sub(_literal_marker, obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        self.on_object(obj=pkg, loader=loader)


class ComparisonsNotQuotes(griffe.Extension):
    """Escape the ``>`` that starts an item's description (``epsilon: >= 0``) in every docstring."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _QUOTE.sub(lambda match: f"{match.group(1)}\\>", obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        self.on_object(obj=pkg, loader=loader)
