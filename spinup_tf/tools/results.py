"""How the variants of a grid ended: ``VariantResult``, each run's final performance and the
summary table printed at the end of a grid run. Imports neither numpy nor TensorFlow."""
from dataclasses import dataclass, field

DIV_LINE_WIDTH = 80


@dataclass
class VariantResult:
    """How one variant ended.

    ``status`` is ``ok``, ``failed``, ``interrupted`` or ``not run``; ``error`` is one line
    (exception type and message, or the exit code); ``performance`` is the last
    ``AverageTestEpRet`` (else ``AverageEpRet``) of the variant's progress.txt, or None.
    """
    label: str
    exp_name: str
    seed: object
    output_dir: str
    status: str = 'not run'
    error: str = ''
    seconds: float = 0.0
    performance: float = None
    performance_key: str = None
    extra: dict = field(default_factory=dict)

    @property
    def ok(self):
        return self.status == 'ok'


def final_performance(output_dir):
    """``(value, column)``: the last ``AverageTestEpRet`` (else ``AverageEpRet``) in
    ``output_dir/progress.txt`` (``spinup_tf.utils.progress_file``); ``(None, None)`` when
    there is no such file, row or column, or the file cannot be read."""
    from spinup_tf.utils.errors import UserInputError
    from spinup_tf.utils.progress_file import read_run_table
    try:
        table = read_run_table(output_dir, partial='drop')
    except (OSError, UserInputError):
        return None, None
    for key in ('AverageTestEpRet', 'AverageEpRet'):
        if key in table:
            value = table.last(key)
            return (float(value), key) if value is not None else (None, None)
    return None, None


def format_summary(results, seconds=None):
    """The table printed at the end of a grid run (one line per variant)."""
    n_ok = sum(r.ok for r in results)
    n_failed = sum(r.status == 'failed' for r in results)
    head = 'Grid summary: %d of %d variants ok' % (n_ok, len(results))
    if n_failed:
        head += ', %d failed' % n_failed
    others = len(results) - n_ok - n_failed
    if others:
        head += ', %d interrupted or not run' % others
    if seconds is not None:
        head += ' (%.1f s)' % seconds
    rows = [('variant', 'status', 'time', 'performance', 'folder')]
    for r in results:
        perf = '-' if r.performance is None else '%.2f' % r.performance
        rows.append((r.label, r.status, '%.1f s' % r.seconds if r.seconds else '-', perf,
                     r.output_dir))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ['=' * DIV_LINE_WIDTH, head, '']
    for row in rows:
        lines.append('  '.join(c.ljust(w) for c, w in zip(row[:4], widths)) + '  ' + row[4])
    keys = sorted({r.performance_key for r in results if r.performance_key})
    lines += ['', 'performance: the last row\'s %s of each progress.txt'
              % (' / '.join(keys) if keys else 'AverageTestEpRet (else AverageEpRet)')]
    bad = [r for r in results if r.status in ('failed', 'interrupted')]
    if bad:
        lines += ['', 'failed or interrupted:']
        lines += ['  %s: %s' % (r.label, r.error or r.status) for r in bad]
    lines.append('=' * DIV_LINE_WIDTH)
    return '\n'.join(lines)
