"""Trains a small conv net and prints the minor page faults per step (run as a script by
``test_host_memory.py``, in a fresh process so malloc starts from its defaults)."""

import json
import resource
import sys

import numpy as np

import flowmesh as tf

rng = np.random.default_rng(0)
if sys.argv[1:] == ["big"]:  # one 48 MB tensor per step: above glibc's largest mmap threshold
    big = tf.Variable(np.ones((12 << 20,), np.float32))
    doubled = tf.reduce_sum(big * 2.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # Until the heap settles, glibc may place the next block above the freed one
        # instead of reusing it: in 5 of 12 runs (no tensor left alive between steps)
        # steps 1-5 each grew the heap by the block and faulted it in; none did later.
        for _ in range(10):
            sess.run(doubled)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(10):
            sess.run(doubled)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    print(json.dumps({"faults_per_step": (after - before) / 10}))
    sys.exit(0)
x = tf.placeholder(tf.float32, [64, 28, 28, 1])
w1 = tf.Variable(rng.normal(0, 0.1, (5, 5, 1, 20)).astype(np.float32))
w2 = tf.Variable(rng.normal(0, 0.1, (5, 5, 20, 50)).astype(np.float32))
h = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME")), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
h = tf.nn.relu(tf.nn.conv2d(h, w2, [1, 1, 1, 1], "VALID"))
loss = tf.reduce_mean(tf.square(h))
train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    feed = {x: rng.normal(size=(64, 28, 28, 1)).astype(np.float32)}
    for _ in range(5):
        sess.run(train, feed)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        sess.run(train, feed)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
print(json.dumps({"faults_per_step": (after - before) / 20}))
