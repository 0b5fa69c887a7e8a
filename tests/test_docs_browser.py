"""The documentation site in a real browser: built, served on localhost and loaded in
Debian's headless Chromium (``tests/docs_site.py`` drives it over the DevTools protocol).

For the home page, an algorithm page (TD3) and a reproduction page (seed 003): the
navigation is there, every equation was rendered by KaTeX and no raw TeX is left, every
image loaded, nothing was requested from another host (the site works offline), and the
console shows no error. The home and TD3 pages are photographed: into the test's folder, and
into ``$SPINUP_DOCS_SCREENSHOTS`` when set (``SPINUP_DOCS_SCREENSHOTS=docs/images`` updates
the README's screenshots).

The search box, typed into as a newcomer would ("TD3", "DQN", "SAC", "PPO", "resume",
"Pong"), lists the matching page among its first three results.

``.ci/run`` installs ``chromium`` when it is missing, so CI always runs this; elsewhere the
test is skipped with that reason when no Chromium is installed.
"""
import os
import struct
import time

import pytest

import docs_site

pytestmark = pytest.mark.skipif(
    docs_site.chromium_path() is None,
    reason='no chromium here: .ci/run installs it (apt-get install chromium), and so can you')

# The page is ready once the theme's scripts ran and KaTeX has replaced every equation.
READY = ("document.readyState === 'complete' && !!document.querySelector('.md-nav--primary')"
         " && document.querySelectorAll('.arithmatex').length === "
         "document.querySelectorAll('.arithmatex .katex').length")

# What the test reads from a page, in one evaluation.
INSPECT = """(() => {
  const text = document.querySelector('article').innerText;
  return {
    title: document.title,
    navLinks: Array.from(document.querySelectorAll('.md-nav--primary .md-nav__link'))
                   .map(a => a.textContent.trim()),
    math: document.querySelectorAll('.arithmatex').length,
    rendered: document.querySelectorAll('.arithmatex .katex').length,
    katexErrors: document.querySelectorAll('.katex-error').length,
    rawTex: ['$$', '\\\\(', '\\\\)', '\\\\[', '\\\\]', '\\\\frac', '\\\\underE']
              .filter(s => text.includes(s)),
    images: Array.from(document.images).map(i => ({src: i.getAttribute('src'),
                                                   ok: i.complete && i.naturalWidth > 0})),
    tables: document.querySelectorAll('article table').length,
    text: text,
  };
})()"""

# Type a query into the theme's search box.
SEARCH = """(() => {
  const box = document.querySelector('.md-search__input');
  box.focus();
  box.value = '%s';
  box.dispatchEvent(new Event('input', {bubbles: true}));
  box.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true}));
  return true;
})()"""

PAGES = [
    # (path, screenshot name and the heading it shows, what the page must hold)
    ('', ('screenshot-home.png', None),
     dict(math=False, images=1, words=['Two commands', 'IQM'])),
    ('algorithms/td3/', ('screenshot-td3.png', 'key-equations'),
     dict(math=True, images=4, words=['Pseudocode', 'q_loss', 'policy_delay',
                                      'target_noise', 'Walker2d-v5'])),
    ('reproductions/seed-003/', None,
     dict(math=True, images=1, words=['update_count_from', 'tensorlayer-fixed',
                                      'P(fixed > as written)', 'AverageTestEpRet'])),
]


# Nothing on a page may be wider than the text column unless it scrolls inside a box that
# fits the column and shows a cue (docs/assets/scroll-cue.js and extra.css: the box's right
# edge shaded while something is hidden there). Every element of the article is measured:
# one that reaches past the column must sit in a box that scrolls sideways (not one that
# cuts it off), and every box whose content is wider than itself must fit the column and
# show the cue. Returns the problems found; the wide boxes are kept in window.__wide.
MEASURE_WIDTHS = r"""(() => {
  const article = document.querySelector('article');
  const col = document.querySelector('.md-content').getBoundingClientRect();
  const outside = r => r.width > 0 && (r.right > col.right + 1 || r.left < col.left - 1);
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const name = el => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') + ' "' + (el.innerText || '').slice(0, 50).replace(/\s+/g, ' ') + '"';
  const problems = [], wide = [];
  for (const el of article.querySelectorAll('*')) {
    // KaTeX's MathML copy (for screen readers) is clipped to nothing on purpose; an SVG's
    // parts are measured as the SVG.
    if (el.closest('.katex-mathml') || (el.ownerSVGElement)) continue;
    if (outside(el.getBoundingClientRect())) {
      let up = el.parentElement;
      while (up !== article && !scrolls(up) && !['hidden', 'clip'].includes(getComputedStyle(up).overflowX)) up = up.parentElement;
      if (up === article || !scrolls(up)) problems.push('sticks out or is cut off: ' + name(el));
    }
    if (scrolls(el) && el.scrollWidth > el.clientWidth + 1) {
      if (outside(el.getBoundingClientRect())) { problems.push('its scrolling box is wider than the column: ' + name(el)); continue; }
      const box = el.closest('.scroll-cue');
      const after = box && getComputedStyle(box, '::after');
      if (!box || !box.classList.contains('scroll-cue--right') || after.opacity !== '1' || !(parseFloat(after.width) > 0) || !after.backgroundImage.includes('gradient'))
        problems.push('scrolls with no visible cue: ' + name(el));
      else wide.push(el);
    }
  }
  window.__wide = wide;
  return {problems: [...new Set(problems)], wide: wide.length};
})()"""

# Scroll every wide box to its right end: its right-hand cue goes, the left-hand one comes.
SCROLL_TO_END = """(() => { window.__wide.forEach(el => { el.scrollLeft = el.scrollWidth; }); return true; })()"""
CUES_AT_END = """(() => window.__wide.filter(el => { const box = el.closest('.scroll-cue');
  return box.classList.contains('scroll-cue--right') || !box.classList.contains('scroll-cue--left'); })
  .map(el => el.innerText.slice(0, 50)))()"""


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp('site')
    proc = docs_site.build(folder, strict=False)  # strictness: test_docs.py
    assert proc.returncode == 0, proc.stdout[-3000:]
    return folder


def png_size(path):
    with open(path, 'rb') as f:
        head = f.read(24)
    assert head[:8] == b'\x89PNG\r\n\x1a\n', path
    return struct.unpack('>II', head[16:24])


def test_pages_render_offline_with_equations_figures_and_no_console_error(site, tmp_path):
    shots = os.environ.get('SPINUP_DOCS_SCREENSHOTS')
    with docs_site.Server(site) as server, \
            docs_site.Browser(tmp_path / 'profile', width=1280, height=800) as browser:
        for path, shot, want in PAGES:
            url = server.url + path
            browser.load(url, ready=READY)
            page = browser.evaluate(INSPECT)
            where = url + ': '

            # Navigation: the theme's nav with every section of mkdocs.yml.
            for section in ('Getting started', 'User guide', 'Algorithms', 'Reproductions',
                            'Benchmark', 'Developer guide', 'TD3'):
                assert section in page['navLinks'], where + 'no %r in the nav' % section

            # Equations: rendered by KaTeX, none left as TeX, none in error.
            if want['math']:
                assert page['math'] > 0, where + 'no equation'
            assert page['rendered'] == page['math'], where + 'equations left unrendered'
            assert page['katexErrors'] == 0, where + 'KaTeX could not parse an equation'
            assert not page['rawTex'], where + 'raw TeX in the text: %s' % page['rawTex']

            # Figures: each one loaded.
            broken = [i['src'] for i in page['images'] if not i['ok']]
            assert not broken, where + 'broken images %s' % broken
            assert len(page['images']) >= want['images'], where + 'figures missing'

            # The generated tables and the code are on the page.
            assert page['tables'] > 0, where + 'no table'
            for word in want['words']:
                assert word in page['text'], where + 'no %r' % word

            # Offline: every request went to this server (or was inline data).
            outside = [u for u in browser.requested_urls()
                       if not u.startswith((server.url, 'data:', 'blob:', 'about:'))]
            assert not outside, where + 'requests to other hosts: %s' % outside

            assert browser.errors() == [], where + 'console errors'

            if shot:
                name, heading = shot
                if heading:  # the equations rather than the title
                    browser.evaluate("document.getElementById('%s').scrollIntoView(); "
                                     "window.scrollBy(0, -60); true" % heading)
                for folder in filter(None, [str(tmp_path), shots]):
                    browser.screenshot(os.path.join(folder, name))
                assert png_size(tmp_path / name) == (1280, 800)


def site_pages():
    """The URL path of every page in mkdocs.yml's nav."""
    from test_docs import mkdocs_config, nav_pages
    return [p[:-len('index.md')] if p.endswith('index.md') else p[:-3] + '/'
            for p in nav_pages(mkdocs_config())]


@pytest.mark.parametrize('width', [1280, 800])
def test_nothing_is_wider_than_the_column_without_a_visible_way_to_see_the_rest(
        site, tmp_path, width):
    """Wide tables (the benchmark's 15 columns, the seeds' 12), signatures, code and display
    equations, on every page, at a desktop width and at a narrow one (no sidebars)."""
    with docs_site.Server(site) as server, \
            docs_site.Browser(tmp_path / 'profile', width=width, height=800) as browser:
        wide = 0
        for path in site_pages():
            browser.load(server.url + path, ready=READY, settle=0.2)
            found = browser.evaluate(MEASURE_WIDTHS)
            assert found['problems'] == [], (path, found['problems'][:5])
            assert browser.evaluate('document.documentElement.scrollWidth <= innerWidth'), path
            if found['wide']:
                browser.evaluate(SCROLL_TO_END)
                time.sleep(0.2)
                assert browser.evaluate(CUES_AT_END) == [], path
            wide += found['wide']
        assert wide > 10  # the wide tables are there, and were measured


# What a newcomer types into the search box, and the page that must be among the first
# three results. The index splits words on punctuation as well as spaces (mkdocs.yml's
# search separator), so the title "Twin Delayed DDPG (TD3)" holds the word "td3".
SEARCHES = [('TD3', 'algorithms/td3/'), ('DQN', 'algorithms/dqn/'), ('SAC', 'algorithms/sac/'),
            ('PPO', 'algorithms/ppo/'), ('resume', 'user-guide/resume/'),
            ('Pong', 'algorithms/dqn/')]

# The page of each result, in the order shown (a result's first link is its page; the
# links after it are that page's sections).
RESULT_PAGES = ("Array.from(document.querySelectorAll('.md-search-result__item'))"
                ".map(li => li.querySelector('a').getAttribute('href'))")


def search(browser, server, query, timeout=30):
    """The pages the theme's search lists for ``query``, best first (searched offline, in
    the theme's web worker)."""
    browser.load(server.url, ready=READY)
    browser.evaluate(SEARCH % query)
    deadline = time.time() + timeout
    while not browser.evaluate("document.querySelectorAll('.md-search-result__item').length") \
            and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(0.3)  # the list is drawn in one go, but let a late redraw land
    pages = [h.split('?')[0].split('#')[0] for h in browser.evaluate(RESULT_PAGES)]
    assert browser.errors() == [], query
    return [server.url + p.lstrip('./') if not p.startswith('http') else p for p in pages]


def test_search_finds_each_algorithm_and_topic_among_the_first_three(site, tmp_path):
    with docs_site.Server(site) as server, \
            docs_site.Browser(tmp_path / 'profile', width=1280, height=800) as browser:
        for query, want in SEARCHES:
            pages = search(browser, server, query)
            assert server.url + want in pages[:3], (query, pages[:5])
        # A word of the text, not of a title: somewhere in the results.
        assert server.url + 'algorithms/td3/' in search(browser, server, 'polyak')
