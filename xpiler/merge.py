"""One output file from the outputs of a source's several entries.

A kernel-only file with several kernels (or a host file with several ``extern "C"``
functions) is translated entry by entry (``xpiler.translate``); each output is a whole program
for its entry. ``merge_outputs`` puts them into one: the first output's top-level items, then
each later output's items that the merged file does not have yet; the function of each entry
comes from that entry's own output. An item that defines a name already defined by a
different item (a helper of the same name and parameter types with another body) is a
conflict: the merge refuses rather than choose. Overloads (the same name, other parameter
types: a helper's set for the element types one entry uses) are kept side by side; a call
that they would resolve differently shows in the re-verification. The merged text is then
verified again for every entry (``translate``'s ``merge`` step), so a merge that changed what
an entry computes is not written.
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast, c_generator

import platforms
from .ir.errors import TranslationFailed

_GEN = c_generator.CGenerator()


def _name(item) -> str | None:
    """The name a top-level item defines (function, variable, typedef, struct tag), if any."""
    if isinstance(item, c_ast.FuncDef):
        return item.decl.name
    if isinstance(item, (c_ast.Decl, c_ast.Typedef)) and item.name:
        return item.name
    if isinstance(item, c_ast.Decl) and isinstance(item.type, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
        return f"tag {item.type.name}" if item.type.name else None
    return None


def _key(item) -> str | None:
    """``_name``, with a function's parameter types: the unit one definition provides."""
    name = _name(item)
    fdecl = item.decl.type if isinstance(item, c_ast.FuncDef) else \
        item.type if _prototype(item) else None
    if name is None or not isinstance(fdecl, c_ast.FuncDecl):
        return name
    types = []
    for p in (fdecl.args.params if fdecl.args else []):
        text = _GEN.visit(p)
        if getattr(p, "name", None):
            text = re.sub(rf"\b{re.escape(p.name)}\b", "", text)
        types.append(" ".join(text.split()))
    return f"{name}({', '.join(types)})"


def _prototype(item) -> bool:
    return isinstance(item, c_ast.Decl) and isinstance(item.type, c_ast.FuncDecl)


def merge_outputs(outputs: list[tuple[str, str | None]], target: str, path: str = "<merged>") -> str:
    """The text of one ``target`` program holding every item of ``outputs`` ((text, entry) per
    translated entry). Raises TranslationFailed on a conflict."""
    from .parse import parse_source

    programs = [parse_source(text, target, path, entry=entry) for text, entry in outputs]
    entries = {entry for _, entry in outputs if entry}
    base = copy.deepcopy(programs[0])
    # another entry's function, as this output has it (its other kernels as the source wrote
    # them, or lifted otherwise): that entry's own output supplies it
    base.ast.ext = [x for x in base.ast.ext
                    if not (_name(x) in entries - {outputs[0][1]} and not _prototype(x))]
    defined: set[str] = set()          # names with a definition (not only a prototype)
    texts: set[str] = set()
    for item in base.ast.ext:
        texts.add(_GEN.visit(item))
        if _key(item) is not None and not _prototype(item):
            defined.add(_key(item))
    for prog, (_, entry) in zip(programs[1:], outputs[1:]):
        for item in prog.ast.ext:
            if _name(item) in entries - {entry} and not _prototype(item):
                continue
            text = _GEN.visit(item)
            if text in texts:
                continue
            name, key = _name(item), _key(item)
            if key is not None and key in defined:
                if _prototype(item):
                    continue          # a prototype of a function the file defines already
                raise TranslationFailed(
                    f"the outputs of the entries define '{name}' differently (the output for "
                    f"'{entry}' and an earlier one): they cannot share one file")
            base.ast.ext.append(copy.deepcopy(item))
            texts.add(text)
            if key is not None and not _prototype(item):
                defined.add(key)
        # what the back-end prints around the items (includes, preamble lines)
        for fact in ("preamble", "includes"):
            have = base.facts.get(fact)
            more = prog.facts.get(fact)
            if isinstance(have, list) and isinstance(more, list):
                have.extend(x for x in more if x not in have)
    return platforms.module(target, "backend").emit(base)
