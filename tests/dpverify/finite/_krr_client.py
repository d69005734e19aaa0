"""A k-ary randomized response client written against Python's ``random`` module (issue 37): at
d = 4, eps = 1 it keeps its value with probability p = e / (e + 3) and otherwise reports one of the
other three uniformly, ``random.randint(0, d - 2)`` with Python's meaning (both ends included)."""

import math
import random


def krr(dataset, d=4, epsilon=1.0):
    (x,) = dataset
    p = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
    if random.random() < p:
        return x
    other = random.randint(0, d - 2)
    return other if other < x else other + 1
