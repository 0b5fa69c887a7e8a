"""The site's build-time generation: an mkdocs hook (``hooks:`` in ``mkdocs.yml``).

Nothing that the code or the committed results already say is pasted into a page. A page
asks for it with a marker on a line of its own, which this hook replaces before Markdown
is rendered::

    <!-- generated: quirks tensorlayer -->        QUIRKS rows of a preset (or: all)
    <!-- generated: reproduce-results udemy -->    plots/reproduce/full/RESULTS.md rows of
                                                   a document (several keys allowed)
    <!-- generated: reproduce-improvement udemy -->   its P(fixed > as written) row(s)
    <!-- generated: benchmark-results td3 -->      plots/benchmark/RESULTS.md rows of an
                                                   algorithm (or: all, outside)
    <!-- generated: benchmark-summary td3 -->      the same rows, in the columns a reader
                                                   of one algorithm needs (9 of 15)
    <!-- generated: benchmark-aggregate -->        the aggregate table of the benchmark
    <!-- generated: code spinup_tf/algos/td3.py q_loss -->   the source of a function or
                                                   class (nested ones too), as it is now
    <!-- generated: table plots/normalization/RESULTS.md 1 -->   the first table of a file
    <!-- generated: include bench/README.md -->    a Markdown file, less its title, its
                                                   headings one level down

An unknown marker, a preset or document that does not exist, a function that is no longer
there, or a table with no rows stops the build (``PluginError``), so a page cannot keep
describing what the code or the data no longer hold. ``tests/test_docs.py`` checks the
tables against ``quirk_table()`` and against RESULTS.md files that it re-makes from the
committed progress files.

The figures under ``plots/`` are added to the site at their repository paths
(``plots/benchmark/Hopper.png``), so pages link them without a copy in ``docs/``.
"""
import ast
import glob
import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = re.compile(r'^<!-- generated: (.+?) -->$', re.M)
REPRODUCE_RESULTS = os.path.join(ROOT, 'plots', 'reproduce', 'full', 'RESULTS.md')
BENCHMARK_RESULTS = os.path.join(ROOT, 'plots', 'benchmark', 'RESULTS.md')
# Figures the site shows, at their repository paths (globs relative to the repository).
FIGURES = ['plots/benchmark/*.png', 'plots/benchmark/*/*.png', 'plots/reproduce/full/*.png',
           'plots/normalization/*.png', 'plots/tune/*.png', 'plots/dqn_sb3/*.png',
           'plots/dqn_defaults/*.png']


class GenerationError(Exception):
    """A marker that cannot be made from the code or the data."""


def _on_path():
    """Put this checkout first on ``sys.path`` (spinup_tf, and what plots/*.py import),
    at the time of use: mkdocs restores ``sys.path`` after it loads the hooks."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)


def _load(name, path):
    """A module of the repository by path (``plots/reproduce.py`` is not in a package)."""
    _on_path()
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def reproduce_documents():
    """``{key: Document}`` of ``plots/reproduce.py`` (title, algo, preset, ...)."""
    module = _load('_docs_reproduce', os.path.join(ROOT, 'plots', 'reproduce.py'))
    return {d.key: d for d in module.DOCUMENTS}


def markdown_tables(path):
    """The Markdown tables of a file: a list of ``(header, separator, rows)``, each row a line."""
    tables, current = [], []
    for line in open(path, encoding='utf-8').read().splitlines() + ['']:
        if line.startswith('|'):
            current.append(line)
        elif current:
            tables.append((current[0], current[1], current[2:]))
            current = []
    return tables


def cells(row):
    """The cells of a Markdown table row."""
    return [c.strip() for c in row.strip().strip('|').split('|')]


def _table(header, separator, rows, what):
    if not rows:
        raise GenerationError('no rows for %s' % what)
    return '\n'.join([header, separator] + rows)


def quirks(name):
    """The rows of ``quirk_table()`` for preset ``name`` ('all': the whole table)."""
    _on_path()
    from spinup_tf.reproductions.presets import QUIRKS, quirk_table
    table = quirk_table()
    if name == 'all':
        header, separator, *rows = table.splitlines()
        return '\n'.join([header, separator] + [escape_text_pipes(r) for r in rows])
    if name not in QUIRKS:
        raise GenerationError('no preset %r in QUIRKS (%s)' % (name, ', '.join(QUIRKS)))
    header, separator, *rows = table.splitlines()
    return _table(header, separator, [escape_text_pipes(r) for r in rows
                                      if cells(r)[0] == name], 'quirks of %s' % name)


def escape_text_pipes(row):
    """A quirk row (``| preset | source: what | flags |``) whose middle cell may hold a
    ``|`` of its own (``KL(new || old)``): escaped as ``\\|`` outside code spans, so
    Markdown keeps three cells. The flags cell and the preset name hold none."""
    inner = row.strip()[1:-1]
    first, rest = inner.split('|', 1)
    middle, last = rest.rsplit('|', 1)
    parts = re.split(r'(`[^`]*`)', middle)
    middle = ''.join(p if p.startswith('`') else p.replace('|', r'\|') for p in parts)
    return '|%s|%s|%s|' % (first, middle, last)


def unescape_text_pipes(row):
    """The row as ``quirk_table()`` made it (the inverse of :func:`escape_text_pipes`)."""
    return row.replace(r'\|', '|')


def reproduce_results(keys, path=REPRODUCE_RESULTS):
    """The rows of the reproductions' main table for these documents, in the table's order."""
    docs = reproduce_documents()
    unknown = [k for k in keys if k not in docs]
    if unknown:
        raise GenerationError('unknown document %s; documents: %s'
                              % (', '.join(unknown), ', '.join(docs)))
    titles = {docs[k].title for k in keys}
    header, separator, rows = markdown_tables(path)[0]
    return _table(header, separator, [r for r in rows if cells(r)[0] in titles],
                  'documents %s in %s' % (', '.join(keys), path))


def reproduce_improvement(keys, path=REPRODUCE_RESULTS):
    """The rows of the reproductions' ``P(fixed > as written)`` table for these documents."""
    docs = reproduce_documents()
    titles = {docs[k].title for k in keys if k in docs}
    tables = markdown_tables(path)
    if len(tables) < 2:
        raise GenerationError('%s has no P(fixed > as written) table' % path)
    header, separator, rows = tables[1]
    return _table(header, separator, [r for r in rows if cells(r)[0] in titles],
                  'the improvement of %s in %s' % (', '.join(keys), path))


def benchmark_results(which, path=BENCHMARK_RESULTS):
    """The benchmark's rows of one algorithm, every row ('all') or the rows outside
    80-120 % of Spinning Up's ('outside')."""
    header, separator, rows = markdown_tables(path)[0]
    names = cells(header)
    algo, outside = names.index('algo'), names.index('outside')
    if which == 'all':
        keep = rows
    elif which == 'outside':
        keep = [r for r in rows if cells(r)[outside]]
    else:
        keep = [r for r in rows if cells(r)[algo] == which]
    return _table(header, separator, keep, 'benchmark rows %r in %s' % (which, path))


# The columns of the short form of the benchmark table: what a reader of one algorithm's page
# needs, narrow enough for the text column (the full table has 15).
SUMMARY_COLUMNS = ('env', 'algo', 'step', 'seeds', 'ours', 'Spinning Up', 'ratio',
                   'ratio 95 % CI', 'outside')


def benchmark_summary(which, path=BENCHMARK_RESULTS):
    """The rows of :func:`benchmark_results`, with only ``SUMMARY_COLUMNS`` (less ``algo``
    when ``which`` is one algorithm)."""
    header, separator, *rows = benchmark_results(which, path).splitlines()
    names = cells(header)
    keep = [c for c in SUMMARY_COLUMNS if not (c == 'algo' and which not in ('all', 'outside'))]
    missing = [c for c in keep if c not in names]
    if missing:
        raise GenerationError('%s has no column %s' % (path, ', '.join(missing)))
    index = [names.index(c) for c in keep]
    line = lambda values: '| ' + ' | '.join(values) + ' |'
    return '\n'.join([line(keep), '|' + '---|' * len(keep)]
                     + [line([cells(r)[i] for i in index]) for r in rows])


def benchmark_aggregate(path=BENCHMARK_RESULTS):
    tables = markdown_tables(path)
    if len(tables) < 2:
        raise GenerationError('%s has no aggregate table' % path)
    return _table(*tables[1], 'the aggregate of %s' % path)


def code(path, name):
    """The source of the function or class ``name`` in ``path`` (the first definition of
    that name, at any depth), dedented, as a fenced Python block."""
    full = os.path.join(ROOT, path)
    if not os.path.exists(full):
        raise GenerationError('no file %s' % path)
    source = open(full, encoding='utf-8').read()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            lines = source.splitlines()[node.lineno - 1 - len(node.decorator_list):
                                        node.end_lineno]
            indent = min(len(l) - len(l.lstrip()) for l in lines if l.strip())
            body = '\n'.join(l[indent:] for l in lines)
            return '```python title="%s: %s"\n%s\n```' % (path, name, body)
    raise GenerationError('no function or class %r in %s' % (name, path))


def table(path, number):
    """The ``number``-th (1-based) Markdown table of the file ``path``."""
    full = os.path.join(ROOT, path)
    if not os.path.exists(full):
        raise GenerationError('no file %s' % path)
    tables = markdown_tables(full)
    if not number.isdigit() or not 1 <= int(number) <= len(tables):
        raise GenerationError('%s has %d tables, not a table %s' % (path, len(tables), number))
    return _table(*tables[int(number) - 1], 'table %s of %s' % (number, path))


def include(path):
    """The Markdown file ``path`` without its first-level title, its other headings one
    level deeper (so it sits under the including page's own headings)."""
    full = os.path.join(ROOT, path)
    if not os.path.exists(full):
        raise GenerationError('no file %s' % path)
    out, fence = [], False
    for line in open(full, encoding='utf-8').read().splitlines():
        if line.startswith('```'):
            fence = not fence
        if not fence and line.startswith('# '):
            continue
        out.append('#' + line if not fence and line.startswith('#') else line)
    return '\n'.join(out).strip()


def generated(spec):
    """The Markdown that the marker ``<!-- generated: SPEC -->`` stands for."""
    kind, *args = spec.split()
    if kind == 'quirks' and len(args) == 1:
        return quirks(args[0])
    if kind == 'reproduce-results' and args:
        return reproduce_results(args)
    if kind == 'reproduce-improvement' and args:
        return reproduce_improvement(args)
    if kind == 'benchmark-results' and len(args) == 1:
        return benchmark_results(args[0])
    if kind == 'benchmark-summary' and len(args) == 1:
        return benchmark_summary(args[0])
    if kind == 'benchmark-aggregate' and not args:
        return benchmark_aggregate()
    if kind == 'code' and len(args) == 2:
        return code(*args)
    if kind == 'table' and len(args) == 2:
        return table(*args)
    if kind == 'include' and len(args) == 1:
        return include(args[0])
    raise GenerationError('unknown marker %r' % spec)


def expand(markdown, where='a page'):
    """``markdown`` with every marker replaced by what it stands for."""
    def one(match):
        try:
            return generated(match.group(1))
        except GenerationError as e:
            raise GenerationError('%s: <!-- generated: %s -->: %s'
                                  % (where, match.group(1), e)) from None
    return MARKER.sub(one, markdown)


# mkdocs's hook events ------------------------------------------------------------------------

def on_page_markdown(markdown, page, config, files):
    from mkdocs.exceptions import PluginError
    try:
        return expand(markdown, page.file.src_uri)
    except GenerationError as e:
        raise PluginError(str(e)) from None


def on_files(files, config):
    from mkdocs.structure.files import File
    for pattern in FIGURES:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            uri = os.path.relpath(path, ROOT).replace(os.sep, '/')
            if files.get_file_from_path(uri) is None:
                files.append(File.generated(config, uri, abs_src_path=path))
    return files
