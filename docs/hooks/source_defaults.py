"""A griffe extension: show each parameter's default as the source writes it.

griffe rebuilds a default from the parsed syntax tree, where ``1e6`` is already the float
``1000000.0``: ``replay_size=int(1e6)`` would read ``int(1000000.0)`` on the site. Here each
default of a function is replaced by its text in the source file (``ast`` keeps every
node's position), so the signature and the parameter list read as the code does.

Loaded by ``mkdocs.yml`` (``extensions: - docs/hooks/source_defaults.py``).
"""
import ast

import griffe


def _source_defaults(node, code):
    """``{parameter name: its default's source text}`` of a function's ``ast`` node."""
    args = node.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    out = {}
    for arg, default in pairs:
        text = ast.get_source_segment(code, default)
        if text is not None and '\n' not in text:
            out[arg.arg] = text
    return out


class SourceDefaults(griffe.Extension):
    """Sets ``parameter.default`` to the default's source text, for functions read from
    source (static analysis, as mkdocstrings does here)."""

    def on_function_instance(self, *, node, func, agent, **kwargs):
        code = getattr(agent, 'code', None)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not code:
            return
        for name, text in _source_defaults(node, code).items():
            if name in func.parameters:
                func.parameters[name].default = text
