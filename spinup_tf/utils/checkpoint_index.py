"""A TensorFlow checkpoint's ``.index`` file, read and bounded here before TensorFlow reads it.

``tf.train.load_checkpoint`` trusts the shapes an index declares: a negative dimension
aborts the process inside TensorFlow (``CHECK`` failure, exit 134), and a shape whose byte
size overflows int64 wraps around any size guard computed in int64, then asks for that
memory. A run folder may come from anyone, so :func:`check_index` parses the index itself
first (reading only, in pure Python, every length bounded) and refuses, as one
``UserInputError``, any entry whose declared shape or size does not fit: a dimension that is
negative or zero, a byte size beyond what the data files hold (computed with Python's
unbounded integers), a size field that disagrees with the shape, a slice into a data file
past its end, an unknown dtype or rank, a shard the folder lacks.

The format (TensorFlow's ``tensor_bundle``, a LevelDB-style table): a 48-byte footer (the
block handles of the metaindex and index blocks, varints, then the magic number); the index
block maps separator keys to the handles of data blocks; a data block holds prefix-compressed
``(key, value)`` entries followed by its restart offsets. The key ``""`` holds the
``BundleHeaderProto`` (``num_shards``); every other key is a tensor's name and its value a
``BundleEntryProto`` (``dtype``, ``shape``, ``shard_id``, ``offset``, ``size``). Blocks
written by TensorFlow's bundle writer are not compressed; a compressed one is refused.
"""
import os
import os.path as osp
import stat

from spinup_tf.utils.errors import UserInputError

MAGIC = 0xdb4775248b80fb57
FOOTER = 48
MAX_INDEX = 64 * 1024 * 1024
MAX_ENTRIES = 1 << 20
MAX_RANK = 32
MAX_SHARDS = 4096
# tensorflow/core/framework/types.proto: the dtypes a variable of this project can have,
# with their size in bytes (DT_STRING has none: its size is checked against the data only)
DTYPE_SIZES = {1: 4, 2: 8, 3: 4, 4: 1, 5: 2, 6: 1, 7: None, 9: 8, 10: 1, 14: 2, 17: 2,
               19: 2, 22: 4, 23: 8}


class IndexError_(UserInputError):
    """The index is not one this project can read safely (the message says why)."""


class Entry:
    """One tensor of the index: ``dtype`` (TensorFlow's enum), ``shape`` (a tuple of ints),
    ``shard``, ``offset`` and ``size`` (bytes in the data file)."""

    def __init__(self, name, dtype, shape, shard, offset, size):
        self.name, self.dtype, self.shape = name, dtype, shape
        self.shard, self.offset, self.size = shard, offset, size


def _varint(data, pos, end):
    """``(value, next position)`` of the unsigned varint at ``pos`` (at most 10 bytes)."""
    result, shift = 0, 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError('a truncated or overlong varint')
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7f) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _signed64(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def _fields(data):
    """``(field number, wire type, value)`` of a protobuf message: ints for varints and fixed
    numbers, bytes for length-delimited fields; groups are refused."""
    pos, end, out = 0, len(data), []
    while pos < end:
        key, pos = _varint(data, pos, end)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos, end)
        elif wire == 1:
            if pos + 8 > end:
                raise ValueError('a truncated fixed64')
            value, pos = int.from_bytes(data[pos:pos + 8], 'little'), pos + 8
        elif wire == 5:
            if pos + 4 > end:
                raise ValueError('a truncated fixed32')
            value, pos = int.from_bytes(data[pos:pos + 4], 'little'), pos + 4
        elif wire == 2:
            length, pos = _varint(data, pos, end)
            if pos + length > end:
                raise ValueError('a field longer than its message')
            value, pos = data[pos:pos + length], pos + length
        else:
            raise ValueError('a protobuf field of wire type %d' % wire)
        out.append((number, wire, value))
    return out


def _block(data, offset, size):
    """The contents of the block at ``offset`` (its 5-byte trailer checked for type)."""
    if offset < 0 or size < 0 or offset + size + 5 > len(data):
        raise ValueError('a block past the end of the file')
    if data[offset + size] != 0:
        raise ValueError('a compressed block (type %d)' % data[offset + size])
    return data[offset:offset + size]


def _entries(block):
    """The ``(key, value)`` entries of a table block."""
    if len(block) < 4:
        raise ValueError('a block too short for its restart count')
    restarts = int.from_bytes(block[-4:], 'little')
    limit = len(block) - 4 - 4 * restarts
    if restarts > len(block) // 4 or limit < 0:
        raise ValueError('a block with an impossible restart count')
    pos, key, out = 0, b'', []
    while pos < limit:
        shared, pos = _varint(block, pos, limit)
        unshared, pos = _varint(block, pos, limit)
        length, pos = _varint(block, pos, limit)
        if shared > len(key) or pos + unshared + length > limit:
            raise ValueError('an entry past the end of its block')
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        out.append((key, block[pos:pos + length]))
        pos += length
        if len(out) > MAX_ENTRIES:
            raise ValueError('more than %d entries' % MAX_ENTRIES)
    return out


def _handle(value):
    offset, pos = _varint(value, 0, len(value))
    size, _ = _varint(value, pos, len(value))
    return offset, size


def _shape(data):
    dims = []
    for number, wire, value in _fields(data):
        if number == 2 and wire == 2:
            size = 0
            for n, w, v in _fields(value):
                if n == 1 and w == 0:
                    size = _signed64(v)
            dims.append(size)
        elif number == 3 and wire == 0 and value:
            raise ValueError('a shape of unknown rank')
        if len(dims) > MAX_RANK:
            raise ValueError('a shape of more than %d dimensions' % MAX_RANK)
    return tuple(dims)


def _entry(name, value):
    dtype, shape, shard, offset, size = 0, (), 0, 0, 0
    for number, wire, field in _fields(value):
        if number == 1 and wire == 0:
            dtype = field
        elif number == 2 and wire == 2:
            shape = _shape(field)
        elif number == 3 and wire == 0:
            shard = field
        elif number == 4 and wire == 0:
            offset = _signed64(field)
        elif number == 5 and wire == 0:
            size = _signed64(field)
        elif number == 7:
            raise ValueError('%s is a partitioned (sliced) tensor' % name)
    return Entry(name, dtype, shape, shard, offset, size)


def read_index(path):
    """``(num_shards, {name: Entry})`` of the index file ``path`` (read as a regular file,
    not through a link, at most ``MAX_INDEX`` bytes); ``UserInputError`` when it is not a
    well-formed index."""
    from spinup_tf.utils.safe_files import read_bytes
    data = read_bytes(path, MAX_INDEX)
    try:
        if len(data) < FOOTER:
            raise ValueError('shorter than its footer')
        if int.from_bytes(data[-8:], 'little') != MAGIC:
            raise ValueError('no table magic number at its end')
        footer = data[-FOOTER:-8]
        _, pos = _varint(footer, 0, len(footer))   # metaindex offset
        _, pos = _varint(footer, pos, len(footer))  # metaindex size
        index_offset, pos = _varint(footer, pos, len(footer))
        index_size, pos = _varint(footer, pos, len(footer))
        body = data[:-FOOTER]
        num_shards, entries = 1, {}
        for _, handle in _entries(_block(body, index_offset, index_size)):
            offset, size = _handle(handle)
            for key, value in _entries(_block(body, offset, size)):
                if key == b'':
                    for number, wire, field in _fields(value):
                        if number == 1 and wire == 0:
                            num_shards = field
                    continue
                name = key.decode('utf-8', 'replace')
                entries[name] = _entry(name, value)
                if len(entries) > MAX_ENTRIES:
                    raise ValueError('more than %d tensors' % MAX_ENTRIES)
    except ValueError as e:
        raise IndexError_('%s is not a checkpoint index that can be read (%s)'
                          % (path, e)) from None
    return num_shards, entries


def _shard_sizes(prefix, num_shards):
    """Bytes of each data file ``prefix.data-%05d-of-%05d``, checked to be regular files."""
    sizes = []
    for i in range(num_shards):
        path = '%s.data-%05d-of-%05d' % (prefix, i, num_shards)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            raise IndexError_('%s is missing: the checkpoint index names %d data file(s)'
                              % (path, num_shards)) from None
        if not stat.S_ISREG(st.st_mode):
            raise IndexError_('%s is not a regular file' % path)
        sizes.append(st.st_size)
    return sizes


def check_index(prefix):
    """Prove, reading only, that TensorFlow can read the checkpoint ``prefix`` (its
    ``prefix.index`` and data files) without trusting a declared size; returns
    ``{name: Entry}``. See the module docstring for what is refused."""
    path = prefix + '.index'
    num_shards, entries = read_index(path)
    if not 1 <= num_shards <= MAX_SHARDS:
        raise IndexError_('%s declares %d data files' % (path, num_shards))
    sizes = _shard_sizes(prefix, num_shards)
    held = sum(sizes)
    claimed = 0
    for name, e in entries.items():
        what = '%s declares tensor %r' % (path, name[:80])
        if e.dtype not in DTYPE_SIZES:
            raise IndexError_('%s of an unknown type (%d)' % (what, e.dtype))
        if any(d <= 0 for d in e.shape):
            raise IndexError_('%s with shape %s: a dimension that is %s' % (
                what, list(e.shape), 'negative' if any(d < 0 for d in e.shape) else 'zero'))
        elements = 1
        for d in e.shape:
            elements *= d  # Python ints: no wrap-around
        width = DTYPE_SIZES[e.dtype]
        nbytes = elements * width if width is not None else elements
        if nbytes >= 1 << 62 or nbytes > held:
            raise IndexError_('%s with shape %s: %d bytes, more than the data files hold (%d)'
                              % (what, list(e.shape), nbytes, held))
        if width is not None and e.size != nbytes or e.size < 0 or e.offset < 0:
            raise IndexError_('%s of %d bytes at offset %d, which its shape %s does not fit'
                              % (what, e.size, e.offset, list(e.shape)))
        if not 0 <= e.shard < num_shards or e.offset + e.size > sizes[e.shard]:
            raise IndexError_('%s past the end of its data file' % what)
        claimed += e.size
    if claimed > held:
        raise IndexError_('%s declares %d bytes of tensors, more than the data files hold (%d)'
                          % (path, claimed, held))
    return entries


def index_prefix(folder, name='variables'):
    """``folder/name``: the prefix ``check_index`` and ``tf.train.load_checkpoint`` take."""
    return osp.join(folder, name)
