"""A griffe extension: the reStructuredText bits of this project's docstrings, as Markdown.

The docstrings follow Spinning Up's: Google-style ``Args:`` sections, with reST inside them
(Symbol / Shape / Description tables bordered by ``====``, ``:math:`...``` roles,
``.. math::`` directives, ``:func:`name``` roles). mkdocstrings renders Markdown, so before
it does, each docstring's text is rewritten here (the source files are not touched):

* a simple table (``====  ====`` borders) becomes a Markdown table; a row whose first
  column is empty, or a ``| `` line block, continues the cell above;
* ``:math:`x``` becomes ``\\(x\\)`` and a ``.. math::`` block ``$$ ... $$`` (rendered by
  KaTeX, as the rest of the site); a ``|`` inside math in a table becomes ``\\vert``;
* ``:func:`name``` (and ``:class:``, ``:meth:``) becomes ``name`` in code;
* a paragraph ending in ``::`` (before an indented literal block) ends in ``:``.

Loaded by ``mkdocs.yml`` (``extensions: - docs/hooks/rst_docstrings.py``).
"""
import re

import griffe

ROLE = re.compile(r':(?:func|class|meth|mod|attr):`~?([^`]+)`')
MATH_ROLE = re.compile(r':math:`((?:[^`]|``)+?)`')
BORDER = re.compile(r'^( *)(=+)( +=+)+ *$')


def _columns(border):
    """``[(start, end)]`` of each ``====`` run of a table border line."""
    return [(m.start(), m.end()) for m in re.finditer(r'=+', border)]


def _cells(line, cols):
    cells = []
    for i, (start, _) in enumerate(cols):
        end = cols[i + 1][0] if i + 1 < len(cols) else len(line)
        cells.append(line[start:end].strip())
    return cells


def _cell_text(text):
    text = text.lstrip('|').strip()
    return text


def _table(lines, cols):
    """A reST simple table (its lines, borders included) as Markdown table lines."""
    rows = []
    header = None
    borders = 0
    for line in lines:
        if BORDER.match(line):
            borders += 1
            if borders == 2 and rows:  # the line under the header
                header, rows = rows, []
            continue
        if not line.strip():
            continue
        cells = _cells(line, cols)
        if rows and not cells[0]:  # continuation of the row above
            for i, c in enumerate(cells):
                if c:
                    rows[-1][i] = (rows[-1][i] + ' ' + _cell_text(c)).strip()
        else:
            rows.append([_cell_text(c) for c in cells])
    if header is None:
        header, rows = [[''] * len(cols)], rows
    out = ['| ' + ' | '.join(header[0]) + ' |', '|' + '---|' * len(cols)]
    for h in header[1:]:  # a header of several lines: extra rows
        out.append('| ' + ' | '.join(h) + ' |')
    for r in rows:
        out.append('| ' + ' | '.join(_math_in_cell(c) for c in r) + ' |')
    return out


def _math_in_cell(cell):
    """A ``|`` would split a Markdown table's cell: inside math it becomes ``\\vert``,
    elsewhere (outside code) ``\\|``."""
    parts = re.split(r'(:math:`(?:[^`]|``)+?`|``[^`]*``|`[^`]*`)', cell)
    for i, part in enumerate(parts):
        if part.startswith(':math:'):
            parts[i] = part.replace('|', r'\vert ')
        elif not part.startswith('`'):
            parts[i] = part.replace('|', r'\|')
    return ''.join(parts)


def rst_to_markdown(text):
    """The Markdown of one docstring's reST constructs (see the module docstring)."""
    lines = text.split('\n')
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = BORDER.match(line)
        if m:
            indent = m.group(1)
            cols = [(a - len(indent), b - len(indent)) for a, b in _columns(line)]
            block, borders = [], 0
            while i < len(lines):
                cur = lines[i]
                if BORDER.match(cur):
                    borders += 1
                block.append(cur[len(indent):] if cur.startswith(indent) else cur.strip())
                i += 1
                if borders == 3:
                    break
            if out and out[-1].strip():
                out.append('')
            out.extend(indent + row for row in _table(block, cols))
            out.append('')
            continue
        m = re.match(r'^( *)\.\. math::(.*)$', line)
        if m:
            indent, first = m.group(1), m.group(2).strip()
            body = [first] if first else []
            i += 1
            while i < len(lines) and (not lines[i].strip() or
                                      len(lines[i]) - len(lines[i].lstrip()) > len(indent)):
                body.append(lines[i].strip())
                i += 1
            body = [b for b in body if b]
            out.extend(['', indent + '$$'] + [indent + b for b in body] + [indent + '$$', ''])
            continue
        if line.rstrip().endswith('::') and line.strip() != '::':
            line = line.rstrip()[:-1]  # reST's "writes::" before a literal block: "writes:"
        elif line.strip() == '::':
            line = ''
        out.append(line)
        i += 1
    text = '\n'.join(out)
    text = MATH_ROLE.sub(lambda m: '\\(%s\\)' % m.group(1), text)
    return ROLE.sub(lambda m: '`%s`' % m.group(1), text)


class RstDocstrings(griffe.Extension):
    """Rewrites every loaded object's docstring with :func:`rst_to_markdown`."""

    def on_object(self, *, obj, loader, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
