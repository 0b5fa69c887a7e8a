"""Plot learning curves from Spinning-Up-style run folders (matplotlib only).

A rebuild of Spinning Up's ``spinup/utils/plot.py`` without seaborn or pandas. Runs live in
``DATA_DIR/EXP_NAME/EXP_NAME_s{seed}/`` and hold a tab-separated ``progress.txt`` (one header
line of column names, then one row per epoch) and a ``config.json`` with ``"exp_name"``.

Examples::

    # Mean test return over seeds with a +-1 std band, saved headless as a PNG.
    python run.py plot data/td3_Pendulum-v1 --save plots/td3.png

    # Compare two experiments, smoothed over 5 epochs, with custom legend entries.
    python run.py plot data/td3_Pendulum-v1 data/ddpg_Pendulum-v1 -l TD3 DDPG -s 5

    # Every seed separately, against epochs, for two columns (writes fig_AverageEpRet.svg
    # and fig_LossQ.svg).
    python run.py plot data/sac_ --count -x Epoch -y AverageEpRet LossQ --save fig.svg

    # A logdir that is not a directory is a prefix: this takes data/td3_*, only seed 0.
    python run.py plot data/td3_ --select _s0 --exclude HalfCheetah

How it works:

* :func:`find_runs` finds every ``progress.txt`` below each logdir, reads it with
  :func:`read_progress`, adds a ``Performance`` column (``AverageTestEpRet`` if present, else
  ``AverageEpRet``) and labels the run with its condition: the ``--legend`` entry of its logdir,
  else ``exp_name`` from ``config.json``, else the name of the run folder's parent.
* :func:`make_plots` draws one figure per value: for each condition, the estimator (mean by
  default) over its runs against the x axis, with a shaded band of +-1 standard deviation
  across runs (see :func:`aggregate`). Each run is smoothed first (see :func:`smooth`).
* :func:`main` is the command line.

Problems are reported as one line on stderr, never a traceback: unreadable or malformed
``progress.txt`` files are skipped with a warning, and the exit code is 2 when nothing at all
can be plotted (no runs found, or a requested column absent from every run).
"""
import argparse
import contextlib
import math
import os
import re
import sys
import warnings

import numpy as np

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.progress_file import ProgressFileError, read_table  # noqa: F401

PROG = 'run.py plot'  # also what plots/plot.py answers to
PROGRESS_FILE = 'progress.txt'
CONFIG_FILE = 'config.json'
ESTIMATORS = {'mean': np.nanmean, 'max': np.nanmax, 'min': np.nanmin, 'median': np.nanmedian}


def _iqm(y, axis=0):
    from spinup_tf.tools.stats import nan_iqm
    return nan_iqm(y, axis)


ESTIMATORS['iqm'] = _iqm  # interquartile mean (spinup_tf.tools.stats)
CI_LABEL = 'band: 95 % bootstrap CI over runs'

# x values above this are shown in scientific notation (as in Spinning Up).
SCI_THRESHOLD = 5e3


class PlotError(Exception):
    """Nothing can be plotted for the request (e.g. a column that no run has)."""


def _warn(msg):
    """One warning line on stderr."""
    print(f'{PROG}: warning: {_one_line(msg)}', file=sys.stderr)


def _error(msg):
    """One error line on stderr."""
    print(f'{PROG}: error: {_one_line(msg)}', file=sys.stderr)


def _one_line(msg):
    return ' '.join(str(msg).split())


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------
def read_progress(path):
    """Read a tab-separated ``progress.txt`` into ``{column name: 1-D numpy array}``, with the
    project's one reader (``spinup_tf.utils.progress_file.read_table``).

    The first line holds the column names, every following line one row of numbers (as
    written by ``str(int)`` / ``str(float)``). A column is ``int64`` when all of its cells are
    integers and ``float64`` otherwise; an empty cell reads as NaN (as pandas would) and blank
    lines are ignored. Columns keep the file's order.

    A last line that is malformed (too few cells or an unparsable cell) *and* has no
    terminating newline is a half-written row from a run still in progress or killed while
    logging: it is dropped with a warning on stderr and the earlier rows are kept.

    The file is read as data from anyone: a regular file, not through a symbolic link, in
    bounded memory and linear time (see ``progress_file``), and a message quotes at most a
    few characters of a cell.

    Raises:
        ProgressFileError: the file is empty, has no header (its first line is data or has
            empty / duplicate names), has no data rows, has a row with the wrong number of
            cells, a non-numeric cell, is too large, not text, or not a regular file.
        OSError: the file cannot be opened (e.g. it does not exist).
    """
    table = read_table(path, partial='keep', warn=_warn)
    if not len(table):
        raise ProgressFileError(f'{path}: no data rows (header only)')
    return table.data


def performance_column(data):
    """The column that ``Performance`` stands for: ``AverageTestEpRet`` if present (off-policy
    algorithms log test returns), else ``AverageEpRet``; ``None`` if neither exists."""
    for name in ('AverageTestEpRet', 'AverageEpRet'):
        if name in data:
            return name
    return None


def _read_config(run_dir):
    """``(exp_name, algo, env_id)`` from the run's ``config.json``, each ``None`` when the
    file or the key is missing."""
    from spinup_tf.utils.safe_files import JSON_LIMIT, read_json
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.lexists(path):
        return None, None, None
    try:
        config = read_json(path, JSON_LIMIT, kind=None)
    except (OSError, UserInputError) as e:
        _warn(f'{path}: unreadable config ({e}); using the folder name')
        return None, None, None
    if not isinstance(config, dict):
        return None, None, None
    return tuple(str(config[k]) if config.get(k) not in (None, '') else None
                 for k in ('exp_name', 'algo', 'env_id'))


def _keep_apart(runs):
    """Split a condition whose runs used different algorithms or envs (by their
    ``config.json``) into one condition per ``(algo, env)``: ``'exp [td3, Pendulum-v1]'``.
    Units are numbered again within each condition."""
    kinds = {}
    for run in runs:
        kinds.setdefault(run['condition'], set()).add((run['algo'], run['env']))
    units = {}
    for run in runs:
        if len(kinds[run['condition']]) > 1:
            what = ', '.join(k for k in (run['algo'], run['env']) if k) or 'unknown'
            run['condition'] = f'{run["condition"]} [{what}]'
        run['unit'] = units.get(run['condition'], 0)
        units[run['condition']] = run['unit'] + 1
    return runs


def _expand_logdir(logdir):
    """The directories a logdir argument stands for, as in Spinning Up.

    An existing directory is itself; a path to a ``progress.txt`` is its folder; anything else
    is a prefix: every sibling directory whose name starts with the path's basename
    (``data/td3_`` -> ``data/td3_Pendulum-v1``, ``data/td3_HalfCheetah-v4``, ...).
    """
    if os.path.isdir(logdir):
        return [logdir]
    if os.path.isfile(logdir) and os.path.basename(logdir) == PROGRESS_FILE:
        return [os.path.dirname(logdir) or os.curdir]
    stripped = logdir.rstrip(os.sep)
    basedir, prefix = os.path.dirname(stripped), os.path.basename(stripped)
    if not prefix or not os.path.isdir(basedir or os.curdir):
        return []
    found = []
    try:
        with os.scandir(basedir or os.curdir) as entries:
            for entry in entries:
                # a sibling that is a symbolic link is not followed: a link to / would make
                # the walk below the whole filesystem (a folder named in full is, though)
                if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
                    found.append(os.path.join(basedir, entry.name))
                elif entry.name.startswith(prefix) and entry.is_symlink():
                    _warn(f'{os.path.join(basedir, entry.name)} is a symbolic link: not '
                          f'followed for the prefix {logdir} (name it in full to plot it)')
    except OSError as e:
        _warn(f'cannot read {basedir or os.curdir}: {(e.strerror or str(e)).lower()}')
    return sorted(found)


def find_runs(logdirs, select=None, exclude=None, legend=None):
    """Find, read and label every run below the given logdirs.

    Args:
        logdirs: directories searched recursively for ``progress.txt``; a path that is not a
            directory is a prefix for sibling directories (see Spinning Up's ``plot.py``).
        select: substrings that a run folder's path (the logdir joined with the folders below
            it, as found) must all contain.
        exclude: substrings that must not occur in that path.
        legend: one condition name per logdir, overriding ``exp_name``.

    Returns:
        A list of dicts, in logdir order then sorted path order, each with ``path`` (the run
        folder), ``condition`` (legend entry, else ``exp_name`` from ``config.json``, else the
        name of the run folder's parent; runs of one condition whose ``config.json`` names
        different algorithms or envs are kept apart, see :func:`_keep_apart`), ``unit``
        (index of the run within its condition), ``algo`` and ``env`` (from ``config.json``,
        or ``None``), ``performance`` (the column ``Performance`` stands for, or ``None``)
        and ``data`` (:func:`read_progress`'s dict plus a ``Performance`` column when
        :func:`performance_column` finds one). Malformed or unreadable progress files are
        skipped with a warning, as is a logdir below which no run is found; a run with one
        row (no curve, a single point) is kept with a warning.
    """
    if isinstance(logdirs, str):
        logdirs = [logdirs]
    select, exclude = list(select or []), list(exclude or [])
    if legend is not None and len(legend) != len(logdirs):
        raise ValueError(f'{len(legend)} legend entries for {len(logdirs)} logdirs: '
                         'give one per logdir')

    runs = []
    for i, logdir in enumerate(logdirs):
        n_files = 0  # progress files below this logdir, whether kept, filtered or unreadable
        unreadable = []
        for root_dir in _expand_logdir(logdir):
            for run_dir, subdirs, files in os.walk(root_dir, onerror=unreadable.append):
                # runs that --overwrite set aside (FOLDER.trash-TIME) are not plotted
                subdirs[:] = sorted(d for d in subdirs if '.trash-' not in d)
                if PROGRESS_FILE not in files:
                    continue
                n_files += 1
                if not all(s in run_dir for s in select) or any(s in run_dir for s in exclude):
                    continue
                path = os.path.join(run_dir, PROGRESS_FILE)
                try:
                    data = read_progress(path)
                except ProgressFileError as e:
                    _warn(f'skipping {e}')
                    continue
                except OSError as e:
                    _warn(f'skipping {path}: {e.strerror or e}')
                    continue
                perf = performance_column(data)
                if perf is not None:
                    data['Performance'] = data[perf]
                if len(next(iter(data.values()))) == 1:
                    _warn(f'{path}: one row only: drawn as a single point, no curve')
                exp_name, algo, env = _read_config(run_dir)
                if legend is not None:
                    condition = legend[i]
                else:
                    condition = (exp_name
                                 or os.path.basename(os.path.dirname(os.path.abspath(run_dir)))
                                 or 'exp')
                runs.append(dict(path=run_dir, condition=condition, unit=0, data=data,
                                 algo=algo, env=env, performance=perf))
        for e in unreadable:  # a folder this user may not list: said, not "no progress"
            _warn(f'cannot read {e.filename}: {(e.strerror or str(e)).lower()}; skipped')
        if not n_files and not unreadable:
            _warn(f'no {PROGRESS_FILE} found under {logdir}')
    return _keep_apart(runs)


# --------------------------------------------------------------------------------------------
# Numerics
# --------------------------------------------------------------------------------------------
def smooth(values, window):
    """Moving average over ``window`` points centred on each point, as Spinning Up does:
    ``convolve(x, ones(window), 'same') / convolve(ones_like(x), ones(window), 'same')``, so
    points near the ends average over the part of the window inside the data. The result has
    the length of ``values`` (also when the window is longer than the data). ``window=1`` is a
    no-op."""
    x = np.asarray(values, dtype=np.float64)
    window = int(window)
    if window < 1:
        raise ValueError(f'smoothing window must be >= 1, got {window}')
    if window == 1 or x.size == 0:
        return x.copy()
    kernel = np.ones(window)
    start = (window - 1) // 2  # the offset of 'same' inside the 'full' convolution
    total = np.convolve(x, kernel, 'full')[start:start + x.size]
    count = np.convolve(np.ones_like(x), kernel, 'full')[start:start + x.size]
    return total / count


def aggregate(xs, ys, est='mean'):
    """Combine several runs of one condition into one curve with a +-1 std band.

    Runs may have different lengths: all are truncated to the shortest run, and row ``i`` of
    every run is taken to be the same point (the same epoch). The x of that point is the mean
    of the runs' x values there (identical when the runs share their x grid, e.g.
    ``TotalEnvInteracts`` or ``Epoch``).

    Args:
        xs, ys: sequences of 1-D arrays, one pair per run.
        est: ``'mean'``, ``'max'``, ``'min'`` or ``'median'``, taken over runs (NaNs ignored).

    Returns:
        ``(x, center, std)``: the estimator over runs at each point, and the sample standard
        deviation across runs (``ddof=1``, as seaborn's ``ci='sd'`` in Spinning Up; zeros for
        a single run). The band is ``center - std`` to ``center + std``.
    """
    if est not in ESTIMATORS:
        raise ValueError(f'unknown estimator {est!r}; choose from {", ".join(ESTIMATORS)}')
    if len(xs) != len(ys) or not xs:
        raise ValueError('aggregate needs one x array per y array, and at least one run')
    n = min(min(len(x) for x in xs), min(len(y) for y in ys))
    X = np.stack([np.asarray(x[:n], dtype=np.float64) for x in xs])
    Y = np.stack([np.asarray(y[:n], dtype=np.float64) for y in ys])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)  # all-NaN points stay NaN, silently
        x = np.nanmean(X, axis=0)
        center = ESTIMATORS[est](Y, axis=0)
        std = np.nanstd(Y, axis=0, ddof=1) if len(ys) > 1 else np.zeros(n)
    return x, center, std


def ci_band(ys, est='mean'):
    """``(low, high)``: the pointwise 95 % percentile bootstrap interval of the estimator over
    runs (``--ci``; ``spinup_tf.tools.stats.curve_interval``: whole runs are resampled), on
    the points :func:`aggregate` keeps (every run cut to the shortest)."""
    from spinup_tf.tools.stats import curve_interval
    n = min(len(y) for y in ys)
    _, low, high = curve_interval(np.stack([np.asarray(y[:n], dtype=np.float64) for y in ys]),
                                  est)
    return low, high


def band(xs, ys, est='mean', smooth_window=1, ci=False):
    """How every figure of the project combines the runs (seeds) of one condition into one
    curve: each run smoothed (:func:`smooth`), then :func:`aggregate` (row ``i`` of every run
    is one point, every run cut to the shortest; x the mean of the runs' x there), with a
    band of +-1 std across runs (``ci``: the 95 % bootstrap interval, :func:`ci_band`).

    Returns ``(x, center, low, high)``; with one run the band is the curve itself. A run
    whose x values differ from the others' (a seed that logs at the first episode end after
    each epoch's steps) is still one curve: points are matched by row, never by x value.
    """
    ys = [smooth(y, smooth_window) for y in ys]
    x, center, std = aggregate(xs, ys, est)
    if len(ys) > 1 and ci:
        low, high = ci_band(ys, est)
    else:
        low, high = center - std, center + std
    return x, center, low, high


# --------------------------------------------------------------------------------------------
# Plotting
# --------------------------------------------------------------------------------------------
def _pyplot():
    import matplotlib.pyplot as plt  # imported late so main() can choose the backend first
    return plt


# Every figure of the project is drawn with matplotlib's own defaults and these settings,
# not with a ``matplotlibrc`` that matplotlib found in the working directory when it was
# imported (a downloaded folder can hold one that turns on ``text.usetex`` or changes any
# style). Mathtext stays on for matplotlib's own tick labels (a log axis's 10^4); every
# label, title and legend entry made from a run's data goes through :func:`plain`.
STYLE = {'text.usetex': False, 'axes.formatter.use_mathtext': False}


def plain(text):
    """``text`` drawn as it is, never as mathtext: each ``$`` escaped (matplotlib draws
    ``\\$`` as a dollar sign), so an ``exp_name`` or env id such as ``$\\frac{$`` is a
    label, not a formula whose parser raises."""
    return None if text is None else str(text).replace('$', r'\$')


@contextlib.contextmanager
def style(**rc):
    """The rc settings of the project's figures for the block (see ``STYLE``); ``rc``: more
    settings. Figures must be made *and* saved inside the block."""
    import matplotlib
    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # what the working directory's matplotlibrc changed, undone
        matplotlib.rcParams.update(STYLE)
        matplotlib.rcParams.update(rc)
        yield


def save_figure(fig, path, **kwargs):
    """``fig.savefig(path, **kwargs)`` without writing through a link: the image is drawn in
    memory and written to a fresh temporary file beside ``path``, then renamed onto it
    (``spinup_tf.utils.safe_files.replace_file``). ``path`` may be a new file or a regular
    file (replaced); a symbolic link, a FIFO or a device there is a ``UserInputError``."""
    import io
    from spinup_tf.utils.safe_files import check_replaceable, replace_file
    check_replaceable(path)  # before the figure is drawn
    fmt = kwargs.pop('format', None) or os.path.splitext(path)[1].lstrip('.').lower() or 'png'
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, **kwargs)
    replace_file(path, buf.getvalue())
    return path


def save_path(save, value, several):
    """The file for ``value``: ``save`` itself, or with several values ``save`` with
    ``_{value}`` inserted before its extension (``fig.png`` -> ``fig_AverageEpRet.png``).
    A path without extension gets ``.png``."""
    root, ext = os.path.splitext(save)
    if not ext:
        ext = '.png'
    if several:
        root += '_' + re.sub(r'[^\w.-]+', '_', value)
    return root + ext


def _check_columns(runs, xaxis, values):
    """Raise PlotError unless ``xaxis`` and every value exist in at least one run."""
    for column in [xaxis, *values]:
        if not any(column in run['data'] for run in runs):
            available = sorted({name for run in runs for name in run['data']})
            shown = ', '.join(available[:40])
            if len(available) > 40:
                shown += f' and {len(available) - 40} more'
            raise PlotError(f'column {column!r} is in no run; available columns: {shown}')


def parse_reference(text):
    """``'VALUE[:LABEL]'`` -> ``(value, label)`` (label ``None`` when not given)."""
    value, _, label = str(text).partition(':')
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f'--reference expects VALUE[:LABEL] with a number, e.g. '
                         f'"207:rl-zoo TD3", got {text!r}') from None
    if not math.isfinite(number):
        raise ValueError(f'--reference expects a finite number, got {text!r}')
    return number, label or None


def y_label(runs, value):
    """The y axis's name: ``value``, or for ``Performance`` the column(s) it stands for in
    ``runs`` (``AverageTestEpRet``, ``AverageEpRet``, or both joined by `` / ``)."""
    if value != 'Performance':
        return value
    drawn = sorted({run.get('performance') or 'Performance' for run in runs
                    if value in run['data']}, reverse=True)
    return ' / '.join(drawn) or value


def default_title(runs):
    """The env's id when every run names the same one in its ``config.json``, else None."""
    envs = {run.get('env') for run in runs}
    return envs.pop() if len(envs) == 1 and None not in envs else None


def plot_value(runs, xaxis, value, count=False, est='mean', smooth_window=1, title=None,
               references=(), ci=False):
    """One figure of ``value`` against ``xaxis``; returns the figure.

    Runs lacking either column are skipped with a warning, and so is a run whose column is
    NaN in every row. Without ``count`` the runs of a condition are combined by
    :func:`aggregate` (estimator line and +-1 std band); with ``count`` each run is its own
    line, labelled ``condition-unit``. The y axis is named by :func:`y_label`; ``title``
    (default :func:`default_title`) heads the figure; each ``(value, label)`` of
    ``references`` is a dashed horizontal line (a published result). ``ci``: the band is
    the 95 % bootstrap interval of the estimator over runs (:func:`ci_band`), not +-1 std.
    """
    plt = _pyplot()
    groups = {}
    for run in runs:
        missing = [c for c in (xaxis, value) if c not in run['data']]
        if missing:
            _warn(f'{run["path"]}: no column {missing[0]!r}; run skipped for {value!r}')
            continue
        if np.isnan(np.asarray(run['data'][value], dtype=np.float64)).all():
            _warn(f'{run["path"]}: column {value!r} is NaN in every row; run skipped')
            continue
        key = f'{run["condition"]}-{run["unit"]}' if count else run['condition']
        groups.setdefault(key, []).append(run)
    if not groups:
        raise PlotError(f'no run has both {xaxis!r} and {value!r} (with a number)')

    fig, ax = plt.subplots(figsize=(8, 5))
    xmax = -np.inf
    for label, group in groups.items():
        xs = [g['data'][xaxis] for g in group]
        ys = [g['data'][value] for g in group]
        lengths = {len(x) for x in xs}
        if len(lengths) > 1:
            _warn(f'{label!r}: runs have {min(lengths)} to {max(lengths)} rows; '
                  f'truncated to the shortest ({min(lengths)})')
        x, center, low, high = band(xs, ys, est, smooth_window, ci)
        line, = ax.plot(x, center, label=plain(label), linewidth=1.5,
                        marker='o' if len(x) == 1 else None)
        if len(group) > 1:
            ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        if np.isfinite(x).any():
            xmax = max(xmax, np.nanmax(np.abs(x)))

    for ref, ref_label in references:
        ax.axhline(ref, color='black', linestyle='--', linewidth=1,
                   label=plain(ref_label or f'reference {ref:g}'))
    ax.set_xlabel(plain(xaxis))
    ax.set_ylabel(plain(y_label([r for group in groups.values() for r in group], value)))
    title = title if title is not None else default_title(runs)
    if title:
        ax.set_title(plain(title))
    ax.grid(True, alpha=0.3)
    ax.legend(loc='best', title=CI_LABEL if ci and not count else None)
    if xmax > SCI_THRESHOLD:
        ax.ticklabel_format(style='sci', axis='x', scilimits=(0, 0))
    fig.tight_layout()
    return fig


def make_plots(runs, xaxis='TotalEnvInteracts', values=('Performance',), count=False,
               est='mean', smooth=1, save=None, show=False, title=None, references=(),
               ci=False):
    """Draw one figure per value (see :func:`plot_value`) and save them.

    Args:
        runs: :func:`find_runs`'s list.
        xaxis: column for the x axis.
        values: column name(s) for the y axis, one figure each.
        count: plot every run separately instead of the estimator over a condition's runs.
        est: estimator over runs: ``'mean'``, ``'max'``, ``'min'`` or ``'median'``.
        smooth: moving-average window applied to each run (1: none).
        save: file to write (format from its extension, e.g. ``.png``, ``.svg``); with several
            values one file per value (see :func:`save_path`). ``None``: save nothing.
        show: call ``plt.show()`` before closing the figures.
        title: the figures' title (default: the env, when every run names the same one).
        references: ``(value, label)`` pairs drawn as horizontal lines.
        ci: bands of 95 % bootstrap intervals over runs instead of +-1 std.

    Returns:
        The list of written files (empty without ``save``).

    Raises:
        PlotError: ``xaxis`` or a value is a column of no run.
    """
    plt = _pyplot()
    values = [values] if isinstance(values, str) else list(values)
    if est not in ESTIMATORS:
        raise ValueError(f'unknown estimator {est!r}; choose from {", ".join(ESTIMATORS)}')
    if not runs:
        raise PlotError('no runs to plot')
    _check_columns(runs, xaxis, values)

    figures, written = [], []
    paths = [save_path(save, value, len(values) > 1) for value in values] if save else []
    from spinup_tf.utils.safe_files import check_replaceable
    for path in paths:  # every file checked before the first one is written
        check_replaceable(path)
    try:
        with style():
            for i, value in enumerate(values):
                fig = plot_value(runs, xaxis, value, count, est, smooth, title, references, ci)
                figures.append(fig)
                if save:
                    if os.path.dirname(paths[i]):
                        os.makedirs(os.path.dirname(paths[i]), exist_ok=True)
                    save_figure(fig, paths[i])
                    written.append(paths[i])
            if show:
                plt.show()
    finally:
        for fig in figures:
            plt.close(fig)
    return written


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------
def has_display():
    """Whether a window can be opened: always on Windows / macOS, else when ``DISPLAY`` (or
    ``WAYLAND_DISPLAY``) is set."""
    if sys.platform in ('win32', 'darwin'):
        return True
    return bool(os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY'))


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (``run.py plot: error: ...``, exit status 2),
    without the usage block: ``--help`` shows that."""

    def error(self, message):
        _error(message)
        sys.exit(2)


def build_parser():
    parser = _Parser(
        prog=PROG, description='Plot learning curves of Spinning-Up-style runs.',
        epilog='example: python run.py plot data/td3_Pendulum-v1 --save plots/td3.png. '
               'For folders from elsewhere run spinup-tf plot ... or python -P -m spinup_tf '
               'plot ..., not python -m spinup_tf from inside them '
               '(docs/user-guide/reliability.md).')
    parser.add_argument('logdir', nargs='+',
                        help='run directories searched recursively for progress.txt; a path '
                             'that is not a directory is a prefix of sibling directories')
    parser.add_argument('--legend', '-l', nargs='*',
                        help='one legend entry (condition name) per logdir')
    parser.add_argument('--xaxis', '-x', default='TotalEnvInteracts',
                        help='x column (default: TotalEnvInteracts)')
    parser.add_argument('--value', '-y', default=['Performance'], nargs='*',
                        help='y column(s), one figure each (default: Performance = '
                             'AverageTestEpRet if logged, else AverageEpRet)')
    parser.add_argument('--count', action='store_true',
                        help='plot every run separately instead of the estimator over seeds')
    parser.add_argument('--smooth', '-s', type=int, default=1,
                        help='moving-average window in epochs (default: 1, no smoothing)')
    parser.add_argument('--select', nargs='*', default=[],
                        help='keep only runs whose folder path contains all these substrings')
    parser.add_argument('--exclude', nargs='*', default=[],
                        help='drop runs whose folder path contains any of these substrings')
    parser.add_argument('--est', default='mean', choices=list(ESTIMATORS),
                        help='estimator over runs (default: mean; iqm: interquartile mean)')
    parser.add_argument('--ci', action='store_true',
                        help='band: the 95 %% stratified bootstrap confidence interval of the '
                             'estimator over runs, instead of +-1 std')
    parser.add_argument('--save', metavar='FILE',
                        help='write the figure to FILE (.png, .svg, ...); with several values '
                             'one file per value, e.g. fig_AverageEpRet.png. Implies no window')
    parser.add_argument('--no-show', action='store_true', help='do not open a window')
    parser.add_argument('--title', '-t', default=None,
                        help='figure title (default: the env id, when all runs share one)')
    parser.add_argument('--reference', '-r', action='append', default=[],
                        metavar='VALUE[:LABEL]',
                        help='a horizontal line at VALUE (a published result), e.g. '
                             '--reference "207:rl-zoo TD3"; repeat for several')
    return parser


def main(argv=None):
    """Command line entry point; returns the exit code (0 ok, 2 nothing to plot / bad usage).

    Uses the non-interactive ``Agg`` backend when ``--save`` is given or there is no display,
    and opens a window only when a display exists and neither ``--save`` nor ``--no-show`` is
    given.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.legend is not None and len(args.legend) != len(args.logdir):
        parser.error(f'--legend needs one entry per logdir ({len(args.logdir)}), '
                     f'got {len(args.legend)}')
    if args.smooth < 1:
        parser.error('--smooth must be >= 1')
    if not args.value:
        parser.error('--value needs at least one column name')
    try:
        references = [parse_reference(r) for r in args.reference]
    except ValueError as e:
        _error(e)
        return 2

    import matplotlib
    if args.save or not has_display():
        matplotlib.use('Agg')
    if args.save:
        from matplotlib.backend_bases import FigureCanvasBase
        ext = os.path.splitext(args.save)[1].lstrip('.').lower() or 'png'
        if ext not in FigureCanvasBase.get_supported_filetypes():
            parser.error(f'--save: unsupported file type .{ext} (use e.g. .png or .svg)')
    show = not args.save and not args.no_show and has_display()

    runs = find_runs(args.logdir, args.select, args.exclude, args.legend)
    if not runs:
        filtered = ' matching --select/--exclude' if args.select or args.exclude else ''
        _error(f'nothing to plot: no readable {PROGRESS_FILE}{filtered} under '
               f'{", ".join(args.logdir)}')
        return 2
    if not args.save and not show and not args.no_show:
        _warn('no display and no --save: the plot is drawn but neither shown nor saved')
    try:
        written = make_plots(runs, args.xaxis, args.value, args.count, args.est, args.smooth,
                             args.save, show=show, title=args.title, references=references,
                             ci=args.ci)
    except (PlotError, UserInputError) as e:  # UserInputError: a link or FIFO at --save
        _error(e)
        return 2
    except OSError as e:  # the user's --save names a place that cannot be written
        _error(f'cannot write {e.filename or args.save}: {e.strerror or e}')
        return 2
    for path in written:
        print(f'saved {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
