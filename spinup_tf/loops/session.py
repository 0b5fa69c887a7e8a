"""Session start-up shared by every algorithm."""


def start_session(graph, logger, inputs, outputs, init_ops=()):
    """A session on ``graph`` with variables initialised, then ``init_ops`` run (e.g. copying
    main into target).

    Registers ``inputs``/``outputs`` for the SavedModel, then finalizes the graph: nothing
    can add ops in the training loop (no silent graph growth).
    """
    from spinup_tf.utils.tf1 import tf, make_session
    with graph.as_default():
        sess = make_session(graph)
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for op in init_ops:
            sess.run(op)
        logger.setup_tf_saver(sess, inputs=inputs, outputs=outputs)
    graph.finalize()
    return sess
