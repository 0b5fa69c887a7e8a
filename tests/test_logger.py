"""EpochLogger files: progress.txt (header once, statistics), config.json, SavedModel."""
import csv
import json
import os

import numpy as np
import pytest

from spinup_tf.utils.logx import EpochLogger, setup_logger_kwargs
from spinup_tf.utils.envs import EnvFn


def _read(path):
    with open(path) as f:
        return list(csv.reader(f, delimiter='\t'))


def test_progress_file_header_once_and_statistics(tmp_path):
    logger = EpochLogger(output_dir=str(tmp_path), quiet=True)
    data = {1: [1.0, 2.0, 3.0, 4.0], 2: [10.0, -2.0]}
    for epoch, vals in data.items():
        for v in vals:
            logger.store(EpRet=v, Loss=v * 2)
        logger.log_tabular('Epoch', epoch)
        logger.log_tabular('EpRet', with_min_and_max=True)
        logger.log_tabular('Loss', average_only=True)
        logger.dump_tabular()
        # Flushed every epoch: readable while the run goes on.
        assert len(_read(tmp_path / 'progress.txt')) == epoch + 1
    rows = _read(tmp_path / 'progress.txt')
    assert rows[0] == ['Epoch', 'AverageEpRet', 'StdEpRet', 'MaxEpRet', 'MinEpRet', 'Loss']
    assert sum(r == rows[0] for r in rows) == 1
    for row, vals in zip(rows[1:], data.values()):
        got = [float(x) for x in row]
        np.testing.assert_allclose(got[1:], [np.mean(vals), np.std(vals), max(vals), min(vals),
                                             2 * np.mean(vals)])
    assert (tmp_path / 'progress.txt').read_text().endswith('\n')


def test_header_is_fixed_by_the_first_epoch(tmp_path):
    logger = EpochLogger(output_dir=str(tmp_path), quiet=True)
    logger.log_tabular('A', 1)
    logger.dump_tabular()
    with pytest.raises(KeyError):
        logger.log_tabular('B', 2)
    with pytest.raises(KeyError):
        logger.dump_tabular()  # A missing


def test_nothing_stored_logs_nan_and_keeps_columns(tmp_path):
    logger = EpochLogger(output_dir=str(tmp_path), quiet=True)
    logger.log_tabular('EpRet', with_min_and_max=True)
    logger.dump_tabular()
    rows = _read(tmp_path / 'progress.txt')
    assert len(rows[0]) == 4 and all(x == 'nan' for x in rows[1])


def test_save_config_is_json_and_records_env_id(tmp_path):
    logger = EpochLogger(output_dir=str(tmp_path), exp_name='exp', quiet=True)

    def algo(env_fn, ac_kwargs=dict(), seed=0, gamma=0.99, fn=np.tanh):
        logger.save_config(dict(locals(), env_id='Pendulum-v1'))
    algo(EnvFn('Pendulum-v1'), ac_kwargs=dict(hidden_sizes=[4]))
    config = json.loads((tmp_path / 'config.json').read_text())
    assert config['exp_name'] == 'exp'
    assert config['env_id'] == 'Pendulum-v1'
    assert config['env_fn'] == {'env_id': 'Pendulum-v1', 'env_kwargs': {}}
    assert config['ac_kwargs'] == {'hidden_sizes': [4]}
    assert config['gamma'] == 0.99 and config['seed'] == 0
    assert isinstance(config['fn'], str)


def test_saved_model_round_trip(tmp_path):
    from spinup_tf.utils.tf1 import tf, placeholder, mlp, make_session
    graph = tf.Graph()
    with graph.as_default():
        x = placeholder(3)
        with tf.variable_scope('main'):
            with tf.variable_scope('pi'):
                pi = mlp(x, [4, 2])
        sess = make_session(graph)
        sess.run(tf.global_variables_initializer())
        logger = EpochLogger(output_dir=str(tmp_path), quiet=True)
        logger.setup_tf_saver(sess, inputs={'x': x}, outputs={'pi': pi})
        graph.finalize()  # saving must not add ops
    logger.save_state({'epoch': 1})
    logger.save_state({'epoch': 2})  # overwrite in place
    info = json.loads((tmp_path / 'tf1_save' / 'model_info.json').read_text())
    assert info['inputs'] == {'x': x.name} and info['state'] == {'epoch': 2}
    assert sorted(os.listdir(tmp_path)) == ['tf1_save']
    # The variables are saved by name, as the safe loader (spinup_tf.saving.policy) reads
    # them back: values only, with TF's checkpoint reader.
    reader = tf.train.load_checkpoint(str(tmp_path / 'tf1_save' / 'variables' / 'variables'))
    with graph.as_default():
        variables = tf.global_variables()
    assert variables and sorted(reader.get_variable_to_shape_map()) == \
        sorted(v.op.name for v in variables)
    for v in variables:
        np.testing.assert_array_equal(reader.get_tensor(v.op.name), sess.run(v))
    sess.close()


def test_later_saves_write_the_graph_the_builder_writes(tmp_path):
    """After the first save of a finalized graph, ``save_state`` writes only the variables
    anew and the first save's ``saved_model.pb`` again: byte for byte what TF's SavedModel
    Builder writes, with the variables of the moment, and it loads."""
    from spinup_tf.utils.tf1 import tf, placeholder, mlp, make_session
    graph = tf.Graph()
    with graph.as_default():
        x = placeholder(3)
        with tf.variable_scope('main'):
            pi = mlp(x, [4, 2])
        sess = make_session(graph)
        sess.run(tf.global_variables_initializer())
        logger = EpochLogger(output_dir=str(tmp_path / 'run'), quiet=True)
        logger.setup_tf_saver(sess, inputs={'x': x}, outputs={'pi': pi})
        variables = tf.global_variables()
        graph.finalize()
    logger.save_state({'epoch': 1})
    for v in variables:  # the weights move between the two saves
        v.load(sess.run(v) + 1.0, sess)
    logger.save_state({'epoch': 2})
    with graph.as_default():
        builder = tf.saved_model.Builder(str(tmp_path / 'reference'))
        builder.add_meta_graph_and_variables(
            sess, [tf.saved_model.tag_constants.SERVING],
            signature_def_map={'serving_default': logger._saver_info['signature']},
            saver=logger.tf_saver, strip_default_attrs=True)
        builder.save()
    saved = tmp_path / 'run' / 'tf1_save'
    assert (saved / 'saved_model.pb').read_bytes() == \
        (tmp_path / 'reference' / 'saved_model.pb').read_bytes()
    assert sorted(os.listdir(saved / 'variables')) == \
        sorted(os.listdir(tmp_path / 'reference' / 'variables'))
    expected = sess.run(pi, {x: np.ones((1, 3))})
    with tf.Graph().as_default() as g2, tf.Session(graph=g2) as s2:
        tf.saved_model.loader.load(s2, [tf.saved_model.tag_constants.SERVING], str(saved))
        np.testing.assert_array_equal(s2.run(pi.name, {x.name: np.ones((1, 3))}), expected)
    sess.close()


def test_setup_logger_kwargs_layout(tmp_path):
    kw = setup_logger_kwargs('td3_x', 7, str(tmp_path))
    assert kw['output_dir'] == os.path.join(str(tmp_path), 'td3_x', 'td3_x_s7')
    assert kw['exp_name'] == 'td3_x'
    dated = setup_logger_kwargs('td3_x', 7, str(tmp_path), datestamp=True)
    assert dated['output_dir'].endswith('-td3_x_s7') and dated['output_dir'] != kw['output_dir']
