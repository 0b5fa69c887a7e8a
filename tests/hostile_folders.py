"""Hostile run folders, built by the tests (and by ``bench/battery.py``) themselves.

* :func:`write_hostile_saved_model` replaces a run's ``tf1_save/`` with a SavedModel whose
  graph writes files with ``tf.io.write_file``: once when it is loaded (its ``main_op``) and
  on every call of its ``pi`` output. With ``same_variables`` its variables are the real
  model's (same names, shapes, dtypes and values), so a loader that reads only values finds
  nothing wrong with it; without, they are of another shape.
* :func:`loads_and_writes` proves that such a model is hostile: the SavedModel loader (what
  ``test_policy`` used before) writes the files. Run it in a child process.
* Small editors for ``config.json``, ``checkpoint/state.json``, ``progress.txt``.
"""
import json
import os
import shutil

import numpy as np


SMALL_TD3 = ['--env', 'Pendulum-v1', '--epochs', '2', '--steps_per_epoch', '300',
             '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '1',
             '--max_ep_len', '100', '--hid', '[8]', '--save_freq', '1']
"""``run.py td3`` flags of a small finished run to copy and damage: 2 epochs of 300 steps, a
checkpoint after each."""


def snapshot(path):
    """Every entry under ``path`` with its content: a file's bytes, a link's target, and
    ``'special'`` for a FIFO, socket or device (folders are implied by their entries). Two
    equal snapshots mean nothing under ``path`` was written, removed or replaced."""
    out = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            p = os.path.join(root, name)
            if os.path.islink(p):
                out[p] = ('link', os.readlink(p))
            elif os.path.isfile(p):
                out[p] = open(p, 'rb').read()
            elif not os.path.isdir(p):
                out[p] = 'special'
    return out


def edit_json(path, fn):
    """Apply ``fn(value) -> value`` to the JSON file ``path`` (``fn`` may edit in place and
    return None)."""
    with open(path) as f:
        value = json.load(f)
    new = fn(value)
    with open(path, 'w') as f:
        json.dump(value if new is None else new, f)


def copy_run(src, dst):
    """A copy of run folder ``src`` at ``dst`` (without its ``.lock``)."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns('.lock'), symlinks=True)
    return dst


def write_hostile_saved_model(model_dir, load_path, call_path, same_variables=True):
    """Replace the SavedModel in ``model_dir`` by one that writes ``load_path`` when loaded
    and ``call_path`` whenever its ``pi`` is run (see the module docstring)."""
    from spinup_tf.utils.tf1 import tf
    reader = tf.train.load_checkpoint(os.path.join(model_dir, 'variables', 'variables'))
    shapes = reader.get_variable_to_shape_map()
    info = json.load(open(os.path.join(model_dir, 'model_info.json')))
    graph = tf.Graph()
    with graph.as_default():
        variables = []
        for name in sorted(shapes):
            value = reader.get_tensor(name)
            if not same_variables and value.ndim == 2:
                value = np.zeros((value.shape[0] + 1, value.shape[1]), value.dtype)
            variables.append(tf.Variable(value, name=name))
        x = tf.placeholder(tf.float32, (None, None), name='x')
        on_call = tf.io.write_file(call_path, tf.constant('written by the model on call'))
        with tf.control_dependencies([on_call]):
            pi = tf.identity(tf.reduce_sum(x, axis=1, keepdims=True) * 0.0, name='pi')
        on_load = tf.io.write_file(load_path, tf.constant('written by the model on load'))
        main_op = tf.group(on_load, tf.variables_initializer(variables))
        sess = tf.Session(graph=graph)
        sess.run(tf.variables_initializer(variables))
        shutil.rmtree(model_dir)
        builder = tf.saved_model.Builder(model_dir)
        signature = tf.saved_model.signature_def_utils.predict_signature_def(
            inputs={'x': x}, outputs={'pi': pi})
        builder.add_meta_graph_and_variables(
            sess, [tf.saved_model.tag_constants.SERVING],
            signature_def_map={'serving_default': signature}, main_op=main_op)
        builder.save()
        sess.close()
    info.update(inputs={'x': x.name}, outputs={'pi': pi.name, 'mu': pi.name})
    with open(os.path.join(model_dir, 'model_info.json'), 'w') as f:
        json.dump(info, f)


def loads_and_writes(model_dir, obs_dim):
    """Load ``model_dir`` with the SavedModel loader and run its ``pi`` once (the old
    ``test_policy``'s way); returns nothing: the model writes its files."""
    from spinup_tf.utils.tf1 import tf
    info = json.load(open(os.path.join(model_dir, 'model_info.json')))
    graph = tf.Graph()
    with graph.as_default(), tf.Session(graph=graph) as sess:
        tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], model_dir)
        sess.run(graph.get_tensor_by_name(info['outputs']['pi']),
                 {graph.get_tensor_by_name(info['inputs']['x']): np.zeros((1, obs_dim))})


def patch_zip_sizes(path, size):
    """Make every member of the zip ``path`` claim ``size`` uncompressed bytes in its
    central directory (a zip bomb's claim, without the bytes)."""
    data = bytearray(open(path, 'rb').read())
    i = 0
    while True:
        i = data.find(b'PK\x01\x02', i)
        if i < 0:
            break
        data[i + 24:i + 28] = (min(size, 2 ** 32 - 2)).to_bytes(4, 'little')
        i += 4
    open(path, 'wb').write(bytes(data))


# ---- Checkpoint index files (TensorFlow's tensor_bundle table), rewritten with other shapes --
def _crc32c_table():
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc32c_table()


def _masked_crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xa282ead8) & 0xFFFFFFFF


def _uvarint(n):
    n &= (1 << 64) - 1  # a negative int64 as its two's complement, as protobuf writes it
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, value):
    if isinstance(value, bytes):
        return _uvarint(number << 3 | 2) + _uvarint(len(value)) + value
    return _uvarint(number << 3) + _uvarint(value)


def encode_bundle_entry(dtype, shape, shard, offset, size):
    """A ``BundleEntryProto`` (no crc: TensorFlow checks it only when it reads the bytes)."""
    dims = b''.join(_field(2, _field(1, d)) for d in shape)
    return (_field(1, dtype) + _field(2, dims) + (_field(3, shard) if shard else b'')
            + (_field(4, offset) if offset else b'') + _field(5, size))


def _table_block(entries):
    body, restarts = bytearray(), []
    for key, value in entries:
        restarts.append(len(body))
        body += _uvarint(0) + _uvarint(len(key)) + _uvarint(len(value)) + key + value
    if not restarts:
        restarts = [0]
    for r in restarts:
        body += r.to_bytes(4, 'little')
    body += len(restarts).to_bytes(4, 'little')
    return bytes(body)


def write_index(path, entries):
    """Write a checkpoint index at ``path`` holding ``entries``: ``[(key bytes, value
    bytes)]`` (the header's key is ``b''``), as TensorFlow's table writer lays it out."""
    entries = sorted(entries)
    out = bytearray()

    def put(block):
        handle = _uvarint(len(out)) + _uvarint(len(block))
        out.extend(block + b'\x00' + _masked_crc32c(block + b'\x00').to_bytes(4, 'little'))
        return handle
    data_handle = put(_table_block(entries))
    meta_handle = put(_table_block([]))
    index_handle = put(_table_block([(entries[-1][0], data_handle)]))
    footer = (meta_handle + index_handle).ljust(40, b'\x00')
    out.extend(footer + (0xdb4775248b80fb57).to_bytes(8, 'little'))
    with open(path, 'wb') as f:
        f.write(bytes(out))


def raw_index_entries(path):
    """``[(key, value)]`` of an index file as stored (``spinup_tf.utils.checkpoint_index``)."""
    from spinup_tf.utils import checkpoint_index as ci
    with open(path, 'rb') as f:
        data = f.read()
    footer = data[-ci.FOOTER:-8]
    _, pos = ci._varint(footer, 0, len(footer))
    _, pos = ci._varint(footer, pos, len(footer))
    offset, pos = ci._varint(footer, pos, len(footer))
    size, _ = ci._varint(footer, pos, len(footer))
    body = data[:-ci.FOOTER]
    out = []
    for _, handle in ci._entries(ci._block(body, offset, size)):
        o, s = ci._handle(handle)
        out += ci._entries(ci._block(body, o, s))
    return out


def patch_index_shape(path, shape, name=None, size=None):
    """Rewrite the index ``path`` with tensor ``name`` (default: the first one that is not a
    scalar) declaring ``shape`` (and ``size`` bytes; default: its stored size), every other
    entry as it was. Returns the name."""
    from spinup_tf.utils import checkpoint_index as ci
    entries = raw_index_entries(path)
    parsed = {k: ci._entry(k.decode(), v) for k, v in entries if k}
    if name is None:
        name = next(k.decode() for k, e in parsed.items() if e.shape)
    out = []
    for key, value in entries:
        if key and key.decode() == name:
            e = parsed[key]
            value = encode_bundle_entry(e.dtype, shape, e.shard, e.offset,
                                        e.size if size is None else size)
        out.append((key, value))
    write_index(path, out)
    return name


def write_nonfinite_model(model_dir, value=float('nan')):
    """Rewrite the variables of the SavedModel in ``model_dir`` with the first entry of every
    kernel set to ``value`` (NaN or an infinity), every other value as it was."""
    from spinup_tf.utils.tf1 import tf
    prefix = os.path.join(model_dir, 'variables', 'variables')
    reader = tf.train.load_checkpoint(prefix)
    shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    graph = tf.Graph()
    with graph.as_default():
        variables = {}
        for i, name in enumerate(sorted(shapes)):
            array = reader.get_tensor(name)
            if name.endswith('kernel') and dtypes[name].is_floating:
                array = np.array(array)
                array.flat[0] = value
            variables[name] = tf.Variable(array, name='v%d' % i)
        saver = tf.train.Saver(variables)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, prefix, write_meta_graph=False, write_state=False)
