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
