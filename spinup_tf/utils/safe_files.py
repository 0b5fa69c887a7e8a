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
* :func:`check_own_files` refuses a folder holding anything but its own regular files and
  folders: a symbolic link, a FIFO, a device or a socket. A run, a resume and a study refuse
  such a folder (``spinup_tf.utils.run_folder.lock_run_folder``) before they write anything,
  so TensorFlow's own writers (checkpoints, SavedModels, TensorBoard) cannot be pointed
  outside it, and no temporary or backup name (``checkpoint.tmp``, ``tf1_save.old``) can be
  a FIFO that an open waits on forever.
* :func:`check_not_link` / :func:`check_components`: a folder the project writes into (a run
  folder, ``EXP_NAME/``, a study's folder and its trials) is not a symbolic link.
* :func:`remove_any` removes a leftover temporary name of any kind without opening it.
* :func:`replace_file` writes a file the user named (``plot --save``, a study's figures)
  through a fresh random temporary name and a rename, refusing a link or a FIFO there.

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
    remove_any(tmp)  # a leftover of any kind (file, link, FIFO, folder), never opened
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def open_for_append(path, truncate=False):
    """``path`` opened for text writes at its end (``truncate``: emptied first), refusing a
    symbolic link or anything but a regular file."""
    # O_NONBLOCK: an open for writing of a FIFO with no reader fails at once (ENXIO) instead
    # of waiting for one; O_TRUNC is applied only once the file is known to be regular.
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _NONBLOCK | \
        (0 if truncate else os.O_APPEND)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UserInputError('%s is a symbolic link; a run folder\'s files must be its '
                                 'own' % path) from None
        if e.errno == errno.ENXIO:
            raise UserInputError('%s is a FIFO, not a regular file' % path) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UserInputError('%s is %s, not a regular file' % (path, _kind(mode)))
        if _NONBLOCK:
            import fcntl
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
        if truncate:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, 'w')


def foreign_entries(folder):
    """``(path, kind)`` of every entry inside ``folder`` (itself excluded) that is neither a
    regular file nor a folder: symbolic links (``'a symbolic link'``), FIFOs, devices and
    sockets. Walked without following any link and without opening any file (a FIFO is
    only looked at); folders that cannot be listed are skipped."""
    found, todo = [], [folder]
    while todo:
        current = todo.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    try:
                        mode = entry.stat(follow_symlinks=False).st_mode
                    except OSError:
                        continue
                    if stat.S_ISLNK(mode):
                        found.append((entry.path, 'a symbolic link'))
                    elif stat.S_ISDIR(mode):
                        todo.append(entry.path)
                    elif not stat.S_ISREG(mode):
                        found.append((entry.path, _kind(mode)))
        except OSError:
            continue
    return sorted(found)


def symlinks_below(folder):
    """The symbolic links inside ``folder`` (itself excluded), walked without following
    any; folders that cannot be listed are skipped."""
    return [path for path, kind in foreign_entries(folder) if kind == 'a symbolic link']


def check_own_files(folder, what='a run folder'):
    """``UserInputError`` naming the first entry inside ``folder`` that is a symbolic link, a
    FIFO, a device or a socket. A run folder's contents must be its own regular files and
    folders: a link could send a write outside it, and opening a FIFO (a planted
    ``checkpoint.tmp``, ``tf1_save.tmp``, ``.lock``, an index file) would wait forever,
    in TensorFlow's or SQLite's own code where no signal reaches Python."""
    bad = sorted(foreign_entries(folder), key=lambda e: (e[1] != 'a symbolic link', e[0]))
    if bad:
        path, kind = bad[0]
        more = ' (and %d more)' % (len(bad) - 1) if len(bad) > 1 else ''
        if kind == 'a symbolic link':
            raise UserInputError('%s is a symbolic link%s; %s must hold its own files, so '
                                 'that nothing is written outside it: replace the link by a '
                                 'copy, or remove it' % (path, more, what))
        raise UserInputError('%s is %s%s, not a regular file or folder; %s holds only its '
                             'own files and folders (remove it)' % (path, kind, more, what))


check_no_symlinks = check_own_files  # the name the callers knew (links were the first kind)


def check_not_link(path, what='run folder'):
    """``UserInputError`` when ``path`` itself is a symbolic link (a folder the project
    writes into must be the folder named, not a way to another one)."""
    if os.path.islink(path):
        raise UserInputError('the %s %s is a symbolic link (to %s); it is not written through: '
                             'name the folder it points to, or copy it'
                             % (what, path, os.readlink(path)))


def check_components(base, path, what='run folder'):
    """``UserInputError`` when a component of ``path`` below ``base`` (the folders the
    project creates inside a folder it was given: ``EXP_NAME/EXP_NAME_s0``, a study's
    trials) exists as a symbolic link or as anything but a folder."""
    base, path = os.path.abspath(base), os.path.abspath(path)
    rel = os.path.relpath(path, base)
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        return
    current = base
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return  # created by the project from here down
        except OSError as e:
            raise UserInputError('cannot use %s: %s' % (current, _why(e))) from None
        if stat.S_ISLNK(st.st_mode):
            raise UserInputError('%s is a symbolic link; the %s %s is made inside %s and is '
                                 'not written through a link (remove it, or choose another '
                                 'name)' % (current, what, path, base))
        if not stat.S_ISDIR(st.st_mode):
            raise UserInputError('%s is %s, not a folder; the %s %s cannot be made there'
                                 % (current, _kind(st.st_mode), what, path))


def remove_any(path):
    """Remove ``path`` whatever it is, without following or opening it: a folder (not a link
    to one) with its contents, anything else (a file, a link, a FIFO) unlinked. Nothing
    there is fine. (``shutil.rmtree`` opens its argument first, and opening a FIFO waits
    for a writer forever.)"""
    import shutil
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def check_replaceable(path):
    """``UserInputError`` unless ``path`` is absent or a regular file (a write must replace
    it, never go through a symbolic link or wait on a FIFO)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise UserInputError('cannot write %s: %s' % (path, _why(e))) from None
    if stat.S_ISLNK(st.st_mode):
        raise UserInputError('%s is a symbolic link (to %s); it is not written through: '
                             'remove it, or write elsewhere' % (path, os.readlink(path)))
    if not stat.S_ISREG(st.st_mode):
        raise UserInputError('%s is %s, not a regular file; it is not replaced'
                             % (path, _kind(st.st_mode)))


def replace_file(path, data):
    """Write ``data`` (bytes or text) to ``path`` through a fresh temporary file beside it
    (a random name created with ``O_EXCL | O_NOFOLLOW``) and a rename: never half-written,
    never through a link, and an existing regular file is replaced. See
    :func:`check_replaceable` for what is refused."""
    import tempfile
    check_replaceable(path)
    if isinstance(data, str):
        data = data.encode('utf-8')
    folder, name = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix='.%s.' % name[:100], suffix='.tmp')
    try:
        with os.fdopen(fd, 'wb') as f:
            os.fchmod(f.fileno(), 0o644)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
