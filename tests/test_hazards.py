"""fast/hazards.py: lists fused into one sess.run keep the order of separate calls."""
import numpy as np

from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.fast.hazards import Hazards, NewOps, accesses


def _graph():
    graph = tf.Graph()
    with graph.as_default():
        v = tf.get_variable('v', initializer=np.float32(1.0))
        w = tf.get_variable('w', initializer=np.float32(5.0))
    return graph, v, w


def test_reads_and_writes_are_found_in_the_graph():
    graph, v, w = _graph()
    with graph.as_default(), NewOps() as new:
        read = tf.identity(v.read_value())
        write = tf.assign(v, w * 2.0)
    kinds = sorted((key, is_write) for op in new.ops for key, is_write in accesses(op))
    assert ('v', True) in kinds and ('v', False) in kinds and ('w', False) in kinds
    assert read.op in new.ops and write.op in new.ops


def test_a_later_list_reads_what_an_earlier_one_wrote_and_no_write_overtakes_a_read():
    """List 1 reads v and writes that plus 1 (its own order: the write needs the read);
    list 2 reads v (must see the write); list 3 sets v to 10 (must wait for list 2's read).
    Run many times: the fused call gives the values of three separate calls every time."""
    graph, v, w = _graph()
    with graph.as_default():
        hazards = Hazards()
        lists = []
        def first():
            old = tf.identity(v.read_value())
            return dict(old=old, train=tf.assign(v, old + 1.0))
        for build in (first,
                      lambda: dict(seen=v.read_value() * 1.0),
                      lambda: dict(train=tf.assign(v, 10.0))):
            with NewOps() as new:
                fetches = build()
            hazards.add(fetches, new.ops)
            lists.append(fetches)
        fused = [lists[0]['old'], lists[1]['seen'], tf.group(lists[0]['train'],
                                                             lists[2]['train'])]
        init = tf.global_variables_initializer()
    sess = make_session(graph)
    for _ in range(50):
        sess.run(init)
        old, seen, _ = sess.run(fused)
        assert (old, seen, sess.run(v)) == (1.0, 2.0, 10.0)
