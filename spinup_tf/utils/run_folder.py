"""A run folder is owned by one process: an OS-level lock for the whole run or resume.

``lock_run_folder(path)`` takes ``fcntl.flock`` on ``path/.lock`` (creating the folder and
the file if needed) and keeps it for the life of the process. A second process that asks for
the same folder gets a ``UserInputError`` naming it, before it writes anything there. The
lock dies with its process, so a run killed with ``kill -9`` leaves no stale lock: a later
``resume`` takes it at once.

The lock file is created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (or, when it exists, opened
with ``O_NOFOLLOW`` and checked to be a regular file), so a planted ``.lock`` symlink creates
nothing outside the folder; and once the lock is held, a folder holding any symbolic link is
refused (``spinup_tf.utils.safe_files.check_no_symlinks``) before the run writes anything.
"""
import errno
import fcntl
import os
import os.path as osp
import stat

from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.safe_files import check_not_link, check_own_files

# What a run folder holds (written by spinup_tf.utils.logx)
PROGRESS_FILE = 'progress.txt'
CONFIG_FILE = 'config.json'
MODEL_DIR = 'tf1_save'
MODEL_INFO_FILE = 'model_info.json'

LOCK_FILE = '.lock'
_held = {}  # folder -> open lock file, kept open (and locked) until the process ends


def lock_run_folder(path):
    """Own the run folder ``path`` for this process; ``UserInputError`` if another holds it."""
    path = osp.abspath(path)
    if path in _held:
        return
    check_not_link(path)  # a run folder that is a link would be written into its target
    if osp.isdir(path):
        check_own_files(path)  # before the lock file is made: a refusal leaves no trace
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UserInputError('cannot use run folder %s: %s' % (path, e.strerror or e)) from None
    f = open_lock_file(path)
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise UserInputError('another process is running in %s (a run or a resume); wait '
                             'for it to end, or use another --exp_name' % path) from None
    try:
        check_own_files(path)  # again, now that no other process of ours can add one
    except UserInputError:
        f.close()
        raise
    _held[path] = f


def open_lock_file(folder):
    """``folder/.lock`` opened for ``flock``: created with ``O_EXCL | O_NOFOLLOW``, or the
    existing regular file opened without following a link. A symbolic link (or anything but
    a regular file) there is a ``UserInputError``; nothing is created through it."""
    path = osp.join(folder, LOCK_FILE)
    nofollow = getattr(os, 'O_NOFOLLOW', 0)
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | nofollow, 0o644)
        except FileExistsError:
            fd = os.open(path, os.O_RDWR | nofollow | getattr(os, 'O_NONBLOCK', 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UserInputError('%s is a symbolic link; a run folder must hold its own files '
                                 '(remove the link)' % path) from None
        raise UserInputError('cannot use run folder %s: %s' % (folder, e.strerror or e)) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UserInputError('%s is not a regular file; remove it' % path)
    return os.fdopen(fd, 'r+')


def release_run_folder(path):
    """Give the folder back (the loops do at their end; the process's exit does anyway)."""
    f = _held.pop(osp.abspath(path), None)
    if f is not None:
        f.close()


def check_writable(path):
    """``UserInputError`` unless ``path`` (a run folder, perhaps not made yet) can be
    created and written: its nearest existing ancestor must be a writable folder. Writes
    nothing; the grid checks every variant with it before the first one starts."""
    import errno
    probe = osp.abspath(path)
    while not osp.exists(probe):
        parent = osp.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not osp.isdir(probe):
        raise UserInputError('cannot use run folder %s: %s is a file, not a folder'
                             % (path, probe))
    if not os.access(probe, os.W_OK | os.X_OK):
        why = os.strerror(errno.EROFS) if _read_only(probe) else 'no write permission'
        raise UserInputError('cannot use run folder %s: %s (%s)' % (path, why, probe))


def _read_only(path):
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
