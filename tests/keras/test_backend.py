"""tf.keras.backend in graph mode: session, values, learning phase, functions."""

import numpy as np

import flowmesh as tf

K = tf.keras.backend


def test_variables_functions_and_learning_phase():
    with tf.Graph().as_default():
        v = K.variable([[1.0, 2.0]], name="v")
        x = K.placeholder(shape=(None, 2))
        f = K.function([x], [x * v, K.constant(3.0)], updates=[v.assign_add([[1.0, 1.0]])])
        out, three = f([np.ones((2, 2), np.float32)])
        np.testing.assert_allclose(out, [[1, 2], [1, 2]])
        assert three == 3.0 and K.eval(v).tolist() == [[2.0, 3.0]]
        K.set_value(v, [[5.0, 6.0]])
        assert K.get_value(v).tolist() == [[5.0, 6.0]]
        assert K.int_shape(x) == (None, 2)
        drop = tf.keras.layers.Dropout(0.5)(tf.ones([1000]))
        assert (K.get_session().run(drop) == 1.0).all()        # inference by default
        K.set_learning_phase(1)
        fixed = tf.keras.layers.Dropout(0.5)(tf.ones([1000]))
        assert (K.get_session().run(fixed) == 0.0).sum() > 300   # training once fixed
