"""The documentation site (``mkdocs.yml``, ``docs/``) and the README, checked against the
code and the committed data, so that neither can drift from them:

* ``mkdocs build --strict`` passes with no warning (a broken link, a page missing from the
  nav, a docstring reference that no longer exists, a marker of the generation hook that
  cannot be made all fail it);
* every generated table is what its source makes: the quirk tables are ``quirk_table()``'s
  rows, and the result tables are the committed RESULTS.md files', which are in turn what
  ``plots/reproduce.py``, ``plots/benchmark.py`` and ``plots/normalization.py`` make from the
  committed progress files today;
* every preset's quirks and every seed document's results are on its page;
* the README is one screen with the two commands first, and its links lead somewhere;
* the developer guide's layer order is the order of the package's imports.

The browser's view of the site is ``tests/test_docs_browser.py``.
"""
import ast
import importlib.util
import os
import re

import pytest
import yaml

import docs_site
from conftest import ROOT, load_plot_script

DOCS = os.path.join(ROOT, 'docs')


def hook():
    """The site's generation hook, ``docs/hooks/spinup_docs.py``."""
    spec = importlib.util.spec_from_file_location(
        'spinup_docs', os.path.join(DOCS, 'hooks', 'spinup_docs.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(path):
    return open(os.path.join(DOCS, path), encoding='utf-8').read()


def markers(text):
    return re.findall(r'^<!-- generated: (.+?) -->$', text, re.M)


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp('site')
    return folder, docs_site.build(folder, strict=True)


def test_mkdocs_build_strict_has_no_warning(built):
    folder, proc = built
    assert proc.returncode == 0, proc.stdout[-5000:]
    warnings = [l for l in proc.stdout.splitlines() if 'WARNING' in l or 'ERROR' in l]
    assert warnings == []
    nav = nav_pages(mkdocs_config())
    pages = [os.path.relpath(os.path.join(d, f), DOCS).replace(os.sep, '/')
             for d, _, fs in os.walk(DOCS) for f in fs if f.endswith('.md')]
    assert sorted(pages) == sorted(nav)  # every page in the nav, once
    for p in pages:  # and built
        html = p[:-3] + '/index.html' if not p.endswith('index.md') else p[:-2] + 'html'
        assert os.path.exists(os.path.join(str(folder), html)), html


def mkdocs_config():
    """mkdocs.yml as data (tags such as ``!!python/name:`` read as None)."""
    class Loader(yaml.SafeLoader):
        pass
    Loader.add_multi_constructor('', lambda loader, suffix, node: None)
    with open(os.path.join(ROOT, 'mkdocs.yml')) as f:
        return yaml.load(f, Loader=Loader)


def nav_pages(entry):
    """The page files of mkdocs.yml's nav (or of a part of it)."""
    if isinstance(entry, dict):
        if 'nav' in entry:
            return nav_pages(entry['nav'])
        return sum((nav_pages(v) for v in entry.values()), [])
    if isinstance(entry, list):
        return sum((nav_pages(v) for v in entry), [])
    return [entry]


def test_built_pages_hold_the_generated_tables_and_parameters(built):
    folder, proc = built
    assert proc.returncode == 0
    td3 = open(os.path.join(str(folder), 'algorithms', 'td3', 'index.html')).read()
    # mkdocstrings read the parameters from the docstring: each one, with its default
    for name, default in [('policy_delay', '2'), ('target_noise', '0.2'), ('act_noise', '0.1')]:
        assert '<code>%s</code>' % name in td3 and '<code>%s</code>' % default in td3, name
    assert '<table>' in td3 and 'Walker2d-v5' in td3
    # The signature is formatted (ruff: one parameter a line, not one line 4,000 px wide),
    # and a default reads as the source writes it (docs/hooks/source_defaults.py)
    signature = re.sub(r'<[^>]+>', '', td3.split('doc-signature', 1)[1].split('</pre>', 1)[0])
    assert '\n    replay_size=int(1e6),\n' in html_text(signature), signature[:300]
    assert '1000000.0' not in td3
    assert 'def q_loss(batch):' not in td3  # highlighted, so split into spans ...
    assert 'q_loss' in td3 and 'min_q_targ' in td3  # ... but there


def html_text(html):
    """``html``'s text with the entities of a code block decoded."""
    import html as html_module
    return html_module.unescape(html)


def test_every_marker_is_made_from_its_source():
    """Each page's markers expand, and quirk tables are ``quirk_table()``'s rows."""
    from spinup_tf.reproductions.presets import QUIRKS, quirk_table
    h = hook()
    table = quirk_table().splitlines()
    seen = set()
    for d, _, files in os.walk(DOCS):
        for f in files:
            if not f.endswith('.md'):
                continue
            text = open(os.path.join(d, f), encoding='utf-8').read()
            expanded = h.expand(text, f)
            assert not markers(expanded), f
            for spec in markers(text):
                kind, *args = spec.split()
                if kind == 'quirks':
                    rows = [h.unescape_text_pipes(r) for r in h.generated(spec).splitlines()]
                    assert rows[:2] == table[:2]
                    names = list(QUIRKS) if args == ['all'] else args
                    assert rows[2:] == [r for r in table[2:] if r.split(' | ')[0][2:] in names]
                    seen.update(names)
    assert seen == set(QUIRKS)  # every preset's quirks are on some page


def test_quirk_rows_keep_their_cells_in_markdown():
    """A quirk whose text holds ``|`` (KL(new || old)) stays a row of three cells."""
    import markdown
    from spinup_tf.reproductions.presets import QUIRKS
    html = markdown.markdown(hook().generated('quirks all'), extensions=['tables'])
    rows = re.findall(r'<tr>(.*?)</tr>', html, re.S)[1:]
    assert len(rows) == sum(len(q) for q in QUIRKS.values())
    assert all(r.count('<td>') == 3 for r in rows)
    assert 'KL(new || old)' in html


def test_each_seed_document_has_its_quirks_figure_and_results_on_its_page():
    rp = load_plot_script('reproduce')
    from spinup_tf.reproductions.presets import QUIRKS
    shown = {}
    for f in sorted(os.listdir(os.path.join(DOCS, 'reproductions'))):
        text = page(os.path.join('reproductions', f))
        for spec in markers(text):
            kind, *args = spec.split()
            shown.setdefault(kind, set()).update(args)
        for key in re.findall(r'plots/reproduce/full/([\w-]+)\.png', text):
            shown.setdefault('figure', set()).add(key)
    docs = {d.key for d in rp.DOCUMENTS}
    assert shown['reproduce-results'] == docs
    assert shown['reproduce-improvement'] == docs
    assert shown['figure'] == docs
    assert set(QUIRKS) <= shown['quirks']


def test_result_tables_on_the_pages_are_the_committed_ones():
    """What the markers give is exactly the committed RESULTS.md rows, and every row of the
    main tables is on some page."""
    h = hook()
    reproduce = h.markdown_tables(h.REPRODUCE_RESULTS)
    keys = [d for d in h.reproduce_documents()]
    shown = []
    for key in keys:
        out = h.generated('reproduce-results %s' % key).splitlines()
        assert out[0] == reproduce[0][0] and out[1] == reproduce[0][1]
        assert set(out[2:]) <= set(reproduce[0][2])
        shown += out[2:]
    assert sorted(shown) == sorted(reproduce[0][2])
    bench = h.markdown_tables(h.BENCHMARK_RESULTS)
    assert h.generated('benchmark-results all').splitlines()[2:] == bench[0][2]
    algos = {h.cells(r)[1] for r in bench[0][2]}
    by_algo = sum((h.generated('benchmark-results %s' % a).splitlines()[2:]
                   for a in sorted(algos)), [])
    assert sorted(by_algo) == sorted(bench[0][2])
    outside = h.generated('benchmark-results outside').splitlines()[2:]
    assert outside and all(('above 120 %' in r) != ('below 80 %' in r) for r in outside)
    assert h.generated('benchmark-aggregate').splitlines()[2:] == bench[1][2]
    # The short form: the same rows, in the summary's columns, cell for cell
    names = h.cells(bench[0][0])
    for which in sorted(algos) + ['outside']:
        full = h.generated('benchmark-results %s' % which).splitlines()
        short = h.generated('benchmark-summary %s' % which).splitlines()
        columns = h.cells(short[0])
        assert set(columns) < set(names) and ('algo' in columns) == (which == 'outside')
        assert len(short) == len(full)
        for long_row, short_row in zip(full[2:], short[2:]):
            assert h.cells(short_row) == [h.cells(long_row)[names.index(c)] for c in columns]


def regenerate(tmp_path, monkeypatch):
    """The RESULTS.md files the site shows, re-made from the committed progress files
    (figures not drawn): ``{committed path: regenerated path}``."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.figure
    monkeypatch.setattr(matplotlib.figure.Figure, 'savefig', lambda *a, **k: None)
    out = {}
    rp = load_plot_script('reproduce')
    rp.main(['--no-run', '--out', str(tmp_path / 'reproduce')])
    out['plots/reproduce/full/RESULTS.md'] = tmp_path / 'reproduce' / 'RESULTS.md'
    bm = load_plot_script('benchmark')
    for name, data_dir in [('benchmark', None), ('timeout_is_terminal', 'timeout_is_terminal'),
                           ('walker2d_v4', 'walker2d_v4')]:
        argv = ['--no-run', '--out', str(tmp_path / name)]
        if data_dir:
            argv += ['--data_dir', os.path.join(ROOT, 'plots', 'benchmark', data_dir, 'data')]
            if data_dir == 'walker2d_v4':
                argv += ['--env_version', 'v4']
        assert bm.main(argv) == 0
        committed = 'plots/benchmark/%sRESULTS.md' % ('' if not data_dir else data_dir + '/')
        out[committed] = tmp_path / name / 'RESULTS.md'
    nm = load_plot_script('normalization')
    os.makedirs(str(tmp_path / 'normalization'))
    nm.write_outputs(os.path.join(nm.HERE, 'data'), [0, 1, 2], 250,
                     str(tmp_path / 'normalization'))
    out['plots/normalization/RESULTS.md'] = tmp_path / 'normalization' / 'RESULTS.md'
    return out


def test_committed_results_are_what_the_committed_progress_files_make(tmp_path, monkeypatch):
    """The tables of every RESULTS.md the site shows, re-made by their scripts from the
    committed progress files, equal the committed ones: a progress file committed without
    its table (or a table edited by hand) fails here."""
    h = hook()
    for committed, remade in regenerate(tmp_path, monkeypatch).items():
        assert h.markdown_tables(str(remade)) == \
            h.markdown_tables(os.path.join(ROOT, committed)), committed


def test_code_markers_show_the_current_source():
    h = hook()
    block = h.generated('code spinup_tf/algos/td3.py update')
    source = open(os.path.join(ROOT, 'spinup_tf', 'algos', 'td3.py')).read()
    body = block.split('\n', 1)[1].rsplit('\n```', 1)[0]
    assert all(line.strip() in source for line in body.splitlines())
    with pytest.raises(h.GenerationError):
        h.generated('code spinup_tf/algos/td3.py no_such_function')
    with pytest.raises(h.GenerationError):
        h.generated('quirks no-such-preset')
    with pytest.raises(h.GenerationError):
        h.generated('reproduce-results no-such-document')
    with pytest.raises(h.GenerationError):
        h.expand('<!-- generated: something else -->\n')


def test_getting_started_python_example_uses_the_package_entry_point():
    """The example that tests/test_package.py runs in a fresh venv is on the page, and it
    calls an algorithm that ``spinup_tf`` exports."""
    import spinup_tf
    from test_package import docs_example
    code = docs_example()
    assert 'from spinup_tf import td3' in code
    assert re.search(r'^from spinup_tf import (\w+)', code, re.M).group(1) in spinup_tf.ALGORITHMS
    ast.parse(code)


README_LIMIT = 150


def test_readme_is_one_screen_with_the_two_commands_first_and_links_that_resolve():
    text = open(os.path.join(ROOT, 'README.md'), encoding='utf-8').read()
    lines = text.splitlines()
    assert len(lines) <= README_LIMIT, len(lines)
    blocks = re.findall(r'```[a-z]*\n(.*?)```', text, re.S)
    assert blocks[0].strip() == \
        'pip install -r requirements.txt && python run.py td3 --env MountainCarContinuous-v0'
    assert blocks[1].strip() == 'pip install -r requirements.txt && python -m pytest -q -n 2'
    assert 'mkdocs serve' in text
    links = re.findall(r'\]\(([^)#]+)(?:#[^)]*)?\)', text)
    local = [l for l in links if '://' not in l]
    assert any(l.startswith('docs/') for l in local)
    for link in local:
        assert os.path.exists(os.path.join(ROOT, link)), link
    for shot in ('docs/images/screenshot-home.png', 'docs/images/screenshot-td3.png'):
        assert shot in local
        assert os.path.getsize(os.path.join(ROOT, shot)) < 400 * 1024, shot


def package_imports():
    """``{sub-package: {sub-packages it imports}}`` of ``spinup_tf``, from the source."""
    deps = {}
    base = os.path.join(ROOT, 'spinup_tf')
    for d, _, files in os.walk(base):
        rel = os.path.relpath(d, base)
        if rel == '.' or '__pycache__' in rel:
            continue
        pkg = rel.split(os.sep)[0]
        for f in files:
            if not f.endswith('.py'):
                continue
            tree = ast.parse(open(os.path.join(d, f)).read())
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.ImportFrom) and node.module and \
                        node.module.startswith('spinup_tf.'):
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names if a.name.startswith('spinup_tf.')]
                for n in names:
                    other = n.split('.')[1]
                    if other != pkg:
                        deps.setdefault(pkg, set()).add(other)
    return deps


def test_layer_order_of_the_developer_guide_is_the_import_order():
    text = page('developer/layout.md')
    line = re.search(r'^\*\*(`\w+`(?: < `\w+`)+)\*\*$', text, re.M).group(1)
    order = re.findall(r'`(\w+)`', line)
    packages = {d for d in os.listdir(os.path.join(ROOT, 'spinup_tf'))
                if os.path.isdir(os.path.join(ROOT, 'spinup_tf', d)) and d != '__pycache__'}
    assert set(order) == packages
    for pkg, imported in package_imports().items():
        for other in imported:
            assert order.index(other) < order.index(pkg), \
                '%s imports %s, above it in the layers' % (pkg, other)


ALGORITHM_PAGES = ['vpg', 'ppo', 'trpo', 'ddpg', 'td3', 'sac', 'dqn']


def prose_words(path):
    """The words of a page of docs/ as a reader meets them: the generated tables expanded,
    the code blocks and the API reference (``:::`` blocks) left out."""
    text = hook().expand(page(path), path)
    text = re.sub(r'^```.*?^```$', '', text, flags=re.M | re.S)
    kept, in_api = [], False
    for line in text.splitlines():
        if line.startswith(':::'):
            in_api = True
            continue
        if in_api and (line.startswith('    ') or not line.strip()):
            continue
        in_api = False
        kept.append(line)
    return len([w for w in ' '.join(kept).split() if re.search(r'[A-Za-z0-9]', w)])


@pytest.mark.parametrize('path, limit', [('algorithms/dqn.md', 2000),
                                         ('user-guide/performance.md', 2500)])
def test_reference_pages_stay_within_their_length(path, limit):
    """Two pages that had grown into lab notebooks (sittings, machines, dates) read as
    reference; history lives in developer/bench.md and the commit log."""
    assert prose_words(path) <= limit


def section(text, heading):
    """The text under ``## heading`` up to the next second-level heading."""
    m = re.search(r'^## %s\n(.*?)(?=^## |\Z)' % re.escape(heading), text, re.M | re.S)
    return m.group(1) if m else None


def saved_keys(algo):
    """The inputs and outputs the algorithm saves, read from its source."""
    if algo in ('vpg', 'ppo', 'trpo'):
        return {'x', 'pi', 'v', 'mu'}  # loops/on_policy.py: mu with test episodes
    source = open(os.path.join(ROOT, 'spinup_tf', 'algos', algo + '.py')).read()
    inputs, outputs = re.search(r'saved=\(dict\(([^)]*)\), dict\(([^)]*)\)\)', source).groups()
    return {kv.split('=')[0].strip() for kv in (inputs + ',' + outputs).split(',') if kv.strip()}


@pytest.mark.parametrize('algo', ALGORITHM_PAGES)
def test_algorithm_page_has_the_sections_a_spinning_up_reader_looks_for(algo):
    text = page('algorithms/%s.md' % algo)
    headings = re.findall(r'^## (.+)$', text, re.M)
    for want in ('The idea', 'Key equations', 'Exploration vs. exploitation', 'Pseudocode',
                 'The file, top to bottom', 'Parameters', 'Saved model contents', 'References',
                 'Other public implementations'):
        assert want in headings, want
    assert 'As Spinning Up gives it' not in text  # the pseudocode is in our own words
    saved = section(text, 'Saved model contents')
    table_keys = set(re.findall(r'^\| `(\w+)`(?:, `(\w+)`)? \|', saved, re.M))
    assert {k for pair in table_keys for k in pair if k} == saved_keys(algo)
    assert 'load_policy(' in saved


def test_every_table_of_the_algorithms_lists_dqn():
    home = page('index.md')
    assert '| [DQN](algorithms/dqn.md) |' in section(home, 'The algorithms')
    training = page('user-guide/training.md')
    assert '| DQN | `python run.py dqn --env CartPole-v1` |' in training
    assert 'Options of the off-policy loop (DDPG, TD3, SAC, DQN;' in training
    assert '| DQN |' in section(page('user-guide/outputs.md'), 'progress.txt')
    assert '| DQN | [Deep Q-Network](dqn.md) |' in page('algorithms/index.md')
