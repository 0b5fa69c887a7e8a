"""``progress.txt``, read in one place: every tool that reads a run's table of epochs calls
this module (``plot``, ``resume``'s records, ``tune``'s pruner, the grid's summary, the
scripts under ``plots/``).

The file, as ``spinup_tf.utils.logx`` writes it: one header line of tab-separated column
names, then one line per epoch of tab-separated numbers (``str(int)`` / ``str(float)``; an
empty cell for a key not logged that epoch). A run killed while it wrote a row leaves a last
line without its newline.

A run folder may come from anyone, so the file is read as data from anyone:

* it is opened with ``spinup_tf.utils.safe_files.open_regular``: a regular file only (a FIFO,
  a device or a folder is refused at once, never waited on), not through a symbolic link;
* it is read in bounded memory and in time linear in its rows and columns: at most
  ``MAX_BYTES`` bytes and ``MAX_LINES`` lines, each line at most ``MAX_LINE`` bytes, at most
  ``MAX_COLUMNS`` columns and ``MAX_CELLS`` numbers in all (the numbers are kept as float64
  / int64 arrays, never as one Python object per cell). Lines are streamed one at a time,
  so a file of a billion tiny rows stops at the bound, not at the machine's memory;
* its cells are never echoed whole in a message (at most ``ECHO`` characters, as ``repr``).

Two views of one file:

* :func:`iter_lines` / :class:`Lines`: the complete lines as text (the records a checkpoint
  keeps of the file are a digest of its bytes, ``spinup_tf.utils.run_records``);
* :func:`read_table`: a :class:`Table` of numeric columns.

Every problem is a :class:`ProgressFileError` (a ``UserInputError``, so a ``ValueError``)
that names the file.
"""
import math
import os
import os.path as osp
import re

import numpy as np

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.safe_files import PROGRESS_LIMIT, human_bytes, open_regular

PROGRESS_FILE = 'progress.txt'
MAX_BYTES = PROGRESS_LIMIT          # 256 MiB: a million epochs of a few hundred bytes
MAX_LINE = 8 * 1024 * 1024          # one line (a header of 100,000 long names fits)
MAX_COLUMNS = 200000
MAX_CELLS = 16 * 1024 * 1024        # numbers kept in all: 128 MiB as float64
MAX_LINES = 1000000 + 1             # a million epochs and the header (blank lines count)
ECHO = 24                           # characters of a cell quoted in a message
_CHUNK_CELLS = 1 << 16              # numbers parsed before they are packed into an array
_INT = re.compile(r'\s*[-+]?\d+\s*\Z')


class ProgressFileError(UserInputError):
    """A ``progress.txt`` that cannot be read as a table of epochs (the message names it)."""


def _quote(text):
    """A cell for a message: short, and printable (``repr``)."""
    text = text.strip()
    return repr(text if len(text) <= ECHO else text[:ECHO] + '...')


class Lines:
    """The complete lines of a progress file, streamed: ``for lineno, line in lines``.

    ``lineno`` counts from 1 as an editor does; ``line`` is the text without its newline
    (and without a ``\\r`` before it). A last piece without its newline (a row the writer was
    killed in) is not yielded: it is in :attr:`partial` once the iteration is over. Use as a
    context manager (the file is closed at its end) or call :meth:`close`.
    """

    def __init__(self, path, follow=False, limit=MAX_BYTES):
        self.path, self.limit = path, limit
        self.partial = None
        self.fd = open_regular(path, follow)  # FileNotFoundError, or one UserInputError
        try:
            size = os.fstat(self.fd).st_size
        except OSError as e:
            os.close(self.fd)
            raise ProgressFileError('cannot read %s: %s' % (path, e.strerror or e)) from None
        if size > limit:
            os.close(self.fd)
            raise ProgressFileError('%s is %s, more than a progress file can be (at most %s '
                                    'are read); it was not read'
                                    % (path, human_bytes(size), human_bytes(limit)))
        self.file = os.fdopen(self.fd, 'rb', buffering=1024 * 1024)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None

    def __iter__(self):
        total, lineno = 0, 0
        try:
            while True:
                raw = self.file.readline(MAX_LINE + 1)
                if not raw:
                    return
                lineno += 1
                if lineno > MAX_LINES:
                    raise ProgressFileError('%s has more than %d lines, more than a progress '
                                            'file can have; it was not read'
                                            % (self.path, MAX_LINES))
                total += len(raw)
                if total > self.limit:
                    raise ProgressFileError('%s grew beyond %s while it was read; it was not '
                                            'read' % (self.path, human_bytes(self.limit)))
                if len(raw) > MAX_LINE:
                    raise ProgressFileError('%s: line %d is longer than %s; it is not a '
                                            'progress file' % (self.path, lineno,
                                                               human_bytes(MAX_LINE)))
                try:
                    text = raw.decode('utf-8')
                except UnicodeDecodeError as e:
                    raise ProgressFileError('%s is not a text file (%s on line %d)'
                                            % (self.path, e.reason, lineno)) from None
                if not text.endswith('\n'):
                    self.partial = text
                    return
                yield lineno, text[:-2] if text.endswith('\r\n') else text[:-1]
        except OSError as e:
            raise ProgressFileError('cannot read %s: %s' % (self.path, e.strerror or e)) \
                from None


def iter_lines(path, follow=False):
    """:class:`Lines` of ``path`` (see there); raises ``FileNotFoundError`` for a missing
    file, else :class:`ProgressFileError` / ``UserInputError``."""
    return Lines(path, follow)


def parse_header(line, path='progress.txt'):
    """The column names of a header line, checked: not blank, not numbers, none empty, none
    twice, at most ``MAX_COLUMNS`` (a set, so the check is linear in the columns)."""
    if not line.strip():
        raise ProgressFileError('%s: no header (first line is blank)' % path)
    if line.count('\t') >= MAX_COLUMNS:
        raise ProgressFileError('%s: %d columns, more than a progress file can have (%d)'
                                % (path, line.count('\t') + 1, MAX_COLUMNS))
    names = [name.strip() for name in line.split('\t')]
    if all(_is_number(name) for name in names):
        raise ProgressFileError('%s: no header (first line is data, not column names)' % path)
    if any(not name for name in names):
        raise ProgressFileError('%s: header has an empty column name' % path)
    seen, dupes = set(), []
    for name in names:
        if name in seen:
            dupes.append(name)
        seen.add(name)
    if dupes:
        shown = sorted(set(dupes))
        raise ProgressFileError('%s: duplicate column name(s) in header: %s%s'
                                % (path, ', '.join(_quote(n)[1:-1] for n in shown[:5]),
                                   ' and %d more' % (len(shown) - 5) if len(shown) > 5 else ''))
    return names


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def split_row(line, n_columns):
    """The cells of a row line, or None when it does not have ``n_columns`` of them (counted
    before the line is split, so a hostile line costs no list)."""
    if line.count('\t') != n_columns - 1:
        return None
    return line.split('\t')


def parse_cell(cell):
    """A cell as a float: an empty cell (a key not logged that epoch) is NaN; ``ValueError``
    for anything but a number (ints, floats, ``nan``, ``inf``)."""
    if not cell or cell.isspace():
        return math.nan
    return float(cell)


class Table:
    """The numeric columns of a progress file.

    ``table.columns``: the names in the file's order; ``table[name]``: a 1-D array (int64
    when every cell of the column is an integer literal, else float64; empty cells NaN);
    ``len(table)``: the rows; ``name in table``; ``table.last(name)``; ``table.data``: the
    ``{name: array}`` dict in column order. An absent file reads as an empty table
    (:func:`read_table` with ``missing_ok``).
    """

    def __init__(self, path, columns, data, n_rows):
        self.path, self.columns, self.data, self.n_rows = path, list(columns), data, n_rows

    def __len__(self):
        return self.n_rows

    def __contains__(self, name):
        return name in self.data

    def __getitem__(self, name):
        return self.data[name]

    def get(self, name, default=None):
        return self.data.get(name, default)

    def last(self, name, default=None):
        """The last row's value of ``name`` as a Python number (``default`` when the table is
        empty or has no such column)."""
        if not self.n_rows or name not in self.data:
            return default
        return self.data[name][-1].item()

    def head(self, n):
        """The table of the first ``n`` rows."""
        n = max(0, min(int(n), self.n_rows))
        return Table(self.path, self.columns, {k: v[:n] for k, v in self.data.items()}, n)


def read_table(path, follow=False, partial='keep', missing_ok=False, warn=None):
    """Read ``path`` into a :class:`Table`.

    Args:
        path: the progress file.
        follow: follow a symbolic link (default: a link is refused; a run folder's files are
            its own).
        partial: what to do with a last line without its newline (a row the writer was
            killed in): ``'keep'`` it when it is a whole row and drop it (with ``warn``)
            when it is not, as Spinning Up's plot does; ``'drop'`` it always (a reader
            following a run that is still writing: ``tune``'s pruner).
        missing_ok: an absent file is an empty table instead of ``FileNotFoundError``.
        warn: called with one line for each thing dropped (default: nothing is said).

    Blank lines are ignored. Raises :class:`ProgressFileError` when the file is empty, has
    no header, a row with another number of cells than the header, a cell that is not a
    number, more than ``MAX_CELLS`` numbers, is not text, or is not a regular file of at most
    ``MAX_BYTES``. A file with a header and no rows is an empty table (``len(t) == 0``).
    """
    try:
        lines = Lines(path, follow)
    except FileNotFoundError:
        if missing_ok:
            return Table(path, [], {}, 0)
        raise
    except ProgressFileError:
        raise
    except UserInputError as e:
        raise ProgressFileError(str(e)) from None
    with lines:
        header, parser = None, None
        for lineno, line in lines:
            if header is None:
                if not line.strip():
                    continue  # leading blank lines: the header is the first line with text
                header = parse_header(line, path)
                parser = _Columns(path, header)
                continue
            if line.strip():
                parser.add(lineno, line)
        tail = lines.partial
    if tail is not None and tail.strip():
        text = tail[:-1] if tail.endswith('\r') else tail
        if header is None:
            header = parse_header(text, path)  # a header without its newline
            parser = _Columns(path, header)
        elif partial == 'keep':
            problem = parser.problem(text)
            if problem is None:
                parser.add(None, text)
            elif warn is not None:
                warn('%s: dropped truncated last line (%s)' % (path, problem))
    if header is None:
        raise ProgressFileError('%s: file is empty' % path)
    return parser.table()


class _Columns:
    """Rows parsed into float64 blocks of about ``_CHUNK_CELLS`` numbers; which columns hold only
    integer literals is tracked as they come, for their int64 arrays."""

    def __init__(self, path, header):
        self.path, self.header, self.n = path, header, len(header)
        self.blocks, self.rows, self.n_rows = [], [], 0
        self.int_cols = list(range(self.n))
        self.max_rows = max(1, MAX_CELLS // self.n)

    def problem(self, line, lineno=None):
        """Why ``line`` is not a row (None when it is)."""
        where = 'line %d' % lineno if lineno is not None else 'the last line'
        cells = split_row(line, self.n)
        if cells is None:
            return '%s has %d fields, expected %d' % (where, line.count('\t') + 1, self.n)
        for name, cell in zip(self.header, cells):
            try:
                parse_cell(cell)
            except ValueError:
                return '%s, column %s: non-numeric value %s' % (where, _quote(name)[1:-1]
                                                                if len(name) > ECHO else
                                                                repr(name), _quote(cell))
        return None

    def add(self, lineno, line):
        if self.n_rows >= self.max_rows:
            raise ProgressFileError('%s holds more than %d numbers (%d columns); it is not '
                                    'read' % (self.path, MAX_CELLS, self.n))
        cells = split_row(line, self.n)
        if cells is None:
            raise ProgressFileError('%s: %s' % (self.path, self.problem(line, lineno)))
        try:
            values = [float(c) for c in cells]
        except ValueError:
            try:
                values = [parse_cell(c) for c in cells]
            except ValueError:
                raise ProgressFileError('%s: %s' % (self.path, self.problem(line, lineno))) \
                    from None
        if self.int_cols:
            self.int_cols = [j for j in self.int_cols if _INT.match(cells[j])]
        self.rows.append(values)
        self.n_rows += 1
        if len(self.rows) * self.n >= _CHUNK_CELLS:
            self._pack()

    def _pack(self):
        if self.rows:
            self.blocks.append(np.array(self.rows, dtype=np.float64).reshape(-1, self.n))
            self.rows = []

    def table(self):
        self._pack()
        values = np.concatenate(self.blocks) if self.blocks else np.zeros((0, self.n))
        self.blocks = []
        data = {}
        ints = set(self.int_cols) if self.n_rows else set()
        for j, name in enumerate(self.header):
            column = np.ascontiguousarray(values[:, j])
            if j in ints and np.all(np.abs(column) <= 2.0 ** 53):
                column = column.astype(np.int64)  # exact: integers this small are floats
            data[name] = column
        return Table(self.path, self.header, data, self.n_rows)


def read_run_table(run_dir, **kwargs):
    """:func:`read_table` of ``run_dir/progress.txt`` (an absent file: an empty table)."""
    kwargs.setdefault('missing_ok', True)
    return read_table(osp.join(run_dir, PROGRESS_FILE), **kwargs)
