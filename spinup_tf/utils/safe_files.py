"""Opening the files of a run folder as data: never through a symbolic link, never a device,
a FIFO or a file larger than it can sensibly be.

A run folder may come from anyone (a download, a colleague's disk). Its files are read and
written only through these helpers:

* :func:`read_bytes` / :func:`read_json` open a file with ``O_NOFOLLOW`` (a symbolic link is
  refused, not followed) and ``O_NONBLOCK`` (a FIFO cannot hang the open), check with
  ``fstat`` that it is a regular file, and read at most ``limit`` bytes: ``/dev/zero`` or a
  10 GB "progress file" is one clear error, not a ``MemoryError``.
* :func:`write_atomic` writes through a fresh temporary file created with
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` and renamed into place, so a planted ``config.json.tmp``
  symlink is removed, never written through, and the target is replaced, never followed.
* :func:`open_for_append` opens ``progress.txt`` for its rows with ``O_NOFOLLOW``.
* :func:`symlinks_below` lists the symbolic links inside a folder; a run or a resume refuses
  a folder that holds any (``spinup_tf.utils.run_folder.lock_run_folder``), so TensorFlow's
  own writers (checkpoints, SavedModels, TensorBoard) cannot be pointed outside it either.

Every failure is a :class:`~spinup_tf.utils.errors.UserInputError` naming the file.
"""
import errno
import json
import os
import stat

from spinup_tf.utils.errors import UserInputError

KIB = 1024
MIB = 1024 * KIB
JSON_LIMIT = 16 * MIB        # config.json, model_info.json, checkpoint/state.json
PROGRESS_LIMIT = 256 * MIB   # progress.txt: a row is a few hundred bytes (a million epochs fit)

_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)
_NONBLOCK = getattr(os, 'O_NONBLOCK', 0)
_CLOEXEC = getattr(os, 'O_CLOEXEC', 0)


def _why(e):
    return (e.strerror or str(e)).lower() if isinstance(e, OSError) else str(e)


def open_regular(path, follow=False):
    """An ``os.open`` descriptor of the regular file ``path`` (read only).

    ``follow=False`` refuses a symbolic link; a FIFO, device or folder is refused either way.
    Raises ``FileNotFoundError`` for a missing file (callers say what it means), else
    ``UserInputError``.
    """
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno == errno.ELOOP or (not follow and os.path.islink(path)):
            raise UserInputError('%s is a symbolic link; a run folder\'s files must be its '
                                 'own (copy the file in instead of linking it)'
                                 % path) from None
        raise UserInputError('cannot read %s: %s' % (path, _why(e))) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UserInputError('%s is not a regular file (%s)' % (path, _kind(st.st_mode)))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _kind(mode):
    for test, name in ((stat.S_ISDIR, 'a folder'), (stat.S_ISFIFO, 'a FIFO'),
                       (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
                       (stat.S_ISSOCK, 'a socket')):
        if test(mode):
            return name
    return 'not a file'


def read_bytes(path, limit, follow=False):
    """The contents of the regular file ``path``, at most ``limit`` bytes (a larger file is a
    ``UserInputError``); see :func:`open_regular`."""
    fd = open_regular(path, follow)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise UserInputError('%s is %s, more than a file of a run folder can be (at most '
                                 '%s are read); it was not read' % (path, human_bytes(size),
                                                                     human_bytes(limit)))
        chunks, total = [], 0
        while True:  # a file that grows while it is read stops at the limit too
            chunk = os.read(fd, min(MIB, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UserInputError('%s grew beyond %s while it was read; it was not read'
                                     % (path, human_bytes(limit)))
        return b''.join(chunks)
    except OSError as e:
        raise UserInputError('cannot read %s: %s' % (path, _why(e))) from None
    finally:
        os.close(fd)


def read_text(path, limit, follow=False):
    """:func:`read_bytes` decoded as UTF-8 (a binary file is a ``UserInputError``)."""
    data = read_bytes(path, limit, follow)
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as e:
        raise UserInputError('%s is not a text file (%s)' % (path, e.reason)) from None


def read_json(path, limit=JSON_LIMIT, follow=False, kind=dict):
    """The JSON value in ``path`` (a ``kind``, a dict by default); anything else is one
    ``UserInputError`` naming the file."""
    text = read_text(path, limit, follow)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise UserInputError('%s is not valid JSON (%s)' % (path, str(e).splitlines()[0]
                                                           if str(e) else type(e).__name__)
                             ) from None
    if kind is not None and not isinstance(value, kind):
        raise UserInputError('%s holds a JSON %s, not an object' % (path, type(value).__name__))
    return value


def write_atomic(path, text):
    """Write ``text`` to ``path`` through a fresh ``path.tmp`` and a rename (never
    half-written, never through a link: a stale ``.tmp`` of any kind is unlinked first and
    the new one is created with ``O_EXCL | O_NOFOLLOW``)."""
    tmp = path + '.tmp'
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def open_for_append(path, truncate=False):
    """``path`` opened for text writes at its end (``truncate``: emptied first), refusing a
    symbolic link or anything but a regular file."""
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC | \
        (os.O_TRUNC if truncate else os.O_APPEND)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UserInputError('%s is a symbolic link; a run folder\'s files must be its '
                                 'own' % path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UserInputError('%s is not a regular file' % path)
    return os.fdopen(fd, 'w')


def symlinks_below(folder):
    """The symbolic links inside ``folder`` (itself excluded), walked without following
    any; folders that cannot be listed are skipped."""
    found = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs + files:
            path = os.path.join(root, name)
            if os.path.islink(path):
                found.append(path)
    return sorted(found)


def check_no_symlinks(folder):
    """``UserInputError`` naming the first symbolic link inside ``folder`` (a run folder's
    contents must be its own: a link could send a write outside it)."""
    links = symlinks_below(folder)
    if links:
        more = ' (and %d more)' % (len(links) - 1) if len(links) > 1 else ''
        raise UserInputError('%s is a symbolic link%s; a run folder must hold its own files, '
                             'so that nothing is written outside it: replace the link by a '
                             'copy, or remove it' % (links[0], more))


def check_readable_dir(path, what='run folder'):
    """``UserInputError`` unless ``path`` is a folder this process can list (a missing one
    and an unreadable one get their own messages)."""
    if not os.path.isdir(path):
        if os.path.lexists(path) and not os.path.exists(path):
            raise UserInputError('no such %s: %s (a symbolic link to nothing)' % (what, path))
        raise UserInputError('no such %s: %s' % (what, path))
    try:
        with os.scandir(path) as it:
            for _ in it:
                break
    except OSError as e:
        raise UserInputError('cannot read the %s %s: %s' % (what, path, _why(e))) from None


def human_bytes(n):
    """``n`` bytes as a short string: ``'931 GiB'``, ``'12.5 MiB'``."""
    n = float(n)
    for unit in ('bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'):
        if n < 1024 or unit == 'PiB':
            if unit == 'bytes':
                return '%d bytes' % n
            return ('%.0f %s' if n >= 100 else '%.1f %s') % (n, unit)
        n /= 1024
