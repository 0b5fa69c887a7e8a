"""Every line of a seed that the quirk table or a seed page cites says what they quote.

The check is mechanical: it opens the seed (``shared/seeds/``) and looks for each quoted
snippet in the lines cited with it. A snippet matches when its text, without whitespace,
occurs in the cited lines joined (without whitespace); ``...`` in a snippet stands for
anything, so each piece must occur, in order.

* The quirk table (``presets.QUIRKS``, each ``Quirk.source``): ``seed NNN line(s) REFS
  (...)``; every backticked snippet of the source is a quote of the cited lines, and a
  source quotes at least one.
* The seed pages (``docs/reproductions/seed-NNN.md``): each citation ``(line N)``,
  ``(lines N-M, K)`` or ``(`quote`, line N)`` quotes the backticked snippets written
  between the previous citation of its table cell or paragraph and the end of its
  parentheses; each citation quotes at least one.
"""
import os
import re

import pytest

from spinup_tf.reproductions.presets import QUIRKS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = [p for p in (os.environ.get('SPINUP_TF_SEEDS'), os.path.join(ROOT, 'shared', 'seeds'),
                   os.path.join(ROOT, '..', 'shared', 'seeds')) if p]

REFS = r'(?P<refs>\d+(?:-\d+)?(?:(?:, | and )\d+(?:-\d+)?)*)'
CITATION = re.compile(r'\blines? ' + REFS)
SOURCE = re.compile(r'^seed (?P<seed>\d{3}) lines? ' + REFS + r' \(')
QUOTE = re.compile(r'`([^`]+)`')


def seed_lines(seed):
    """The seed's lines (1-based: ``lines[n]`` is line n), or skip when the seeds are not
    next to the checkout."""
    for folder in SEEDS:
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                if name.startswith('%03d_' % seed):
                    with open(os.path.join(folder, name), encoding='utf-8') as f:
                        return [''] + f.read().split('\n')
    pytest.skip('the seed documents (shared/seeds/) are not next to this checkout')


def cited(lines, refs):
    """The text of the cited lines, joined, and the line numbers."""
    numbers = []
    for part in re.split(r', | and ', refs):
        first, _, last = part.partition('-')
        numbers += range(int(first), int(last or first) + 1)
    assert all(0 < n < len(lines) for n in numbers), (refs, len(lines) - 1)
    return ''.join(lines[n] for n in numbers), numbers


def squash(text):
    return re.sub(r'\s+', '', text)


def quoted_in(quote, text):
    """Whether ``quote`` (``...`` for anything) occurs in ``text``, whitespace aside."""
    text, at = squash(text), 0
    for piece in re.split(r'\.\.\.|…', quote):
        piece = squash(piece)
        if not piece:
            continue
        found = text.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def check(seed, refs, quotes, where):
    lines = seed_lines(seed)
    text, numbers = cited(lines, refs)
    assert quotes, '%s: the citation of lines %s quotes nothing' % (where, refs)
    for quote in quotes:
        assert quoted_in(quote, text), (
            '%s: `%s` is not in seed %03d lines %s:\n%s' % (
                where, quote, seed, refs, '\n'.join('%5d %s' % (n, lines[n]) for n in numbers)))


@pytest.mark.parametrize('name', sorted(QUIRKS))
def test_the_quirk_table_quotes_the_lines_it_cites(name):
    for quirk in QUIRKS[name]:
        m = SOURCE.match(quirk.source)
        assert m, 'a source starts "seed NNN line(s) N-M, K (": %r' % quirk.source
        check(int(m.group('seed')), m.group('refs'), QUOTE.findall(quirk.source),
              '%s: %s' % (name, quirk.source))


def page_citations(text):
    """``(refs, quotes)`` of every citation of a page (see the module's docstring)."""
    text = re.sub(r'```.*?```', '', text, flags=re.S)  # code blocks quote no seed
    units = []
    for paragraph in re.split(r'\n\s*\n', text):
        if paragraph.lstrip().startswith('|'):
            for row in paragraph.splitlines():
                units += row.split('|')
        else:
            units.append(paragraph)
    out = []
    for unit in units:
        start = 0
        for m in CITATION.finditer(unit):
            opened = unit.rfind('(', 0, m.start())
            closed = unit.rfind(')', 0, m.start())
            end = unit.find(')', m.end()) + 1 if opened > closed else m.end()
            out.append((m.group('refs'), QUOTE.findall(unit[start:end]), unit.strip()))
            start = end
    return out


PAGES = ['seed-000.md', 'seed-001.md', 'seed-002.md', 'seed-003.md', 'seed-004.md']


@pytest.mark.parametrize('page', PAGES)
def test_the_seed_pages_quote_the_lines_they_cite(page):
    with open(os.path.join(ROOT, 'docs', 'reproductions', page), encoding='utf-8') as f:
        citations = page_citations(f.read())
    seed = int(page[5:8])
    for refs, quotes, unit in citations:
        check(seed, refs, quotes, '%s: %s' % (page, unit))


def test_the_checker_finds_a_wrong_line_and_a_wrong_quote():
    lines = seed_lines(0)
    assert quoted_in('if t > start_steps:', cited(lines, '168')[0])
    assert not quoted_in('if t > start_steps:', cited(lines, '167')[0])
    assert quoted_in('if t > 0 and ... == 0:', cited(lines, '217')[0])
    assert not quoted_in('if t >= 0', cited(lines, '217')[0])
    refs, quotes, _ = page_citations('| a `x = 1` (line 3), b `y` (lines 4-5, 9) | `--f` |')[1]
    assert (refs, quotes) == ('4-5, 9', ['y'])
    assert page_citations('quoted (`z`, line 7).')[0][:2] == ('7', ['z'])
