"""FarmHash ``Fingerprint64`` (farmhashna) and TensorFlow's ``FingerprintCat64``, in pure Python.

TensorFlow hashes strings with these for ``string_to_hash_bucket_fast`` (so
``categorical_column_with_hash_bucket``), vocabulary OOV buckets and ``sparse_cross_hashed``
(``crossed_column``). Matching them bit for bit makes bucket ids, and so checkpoints of
hashed models, interchangeable with TensorFlow's.
"""

from __future__ import annotations

_M = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F


def _fetch64(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 8], "little")


def _fetch32(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 4], "little")


def _rot(v: int, shift: int) -> int:
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _M


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _hash_len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _len0to16(s: bytes) -> int:
    n = len(s)
    if n >= 8:
        mul = K2 + n * 2
        a = (_fetch64(s, 0) + K2) & _M
        b = _fetch64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = K2 + n * 2
        a = _fetch32(s, 0)
        return _hash_len16((n + (a << 3)) & _M, _fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * K2) ^ (z * K0)) & _M) * K2) & _M
    return K2


def _len17to32(s: bytes) -> int:
    n = len(s)
    mul = K2 + n * 2
    a = (_fetch64(s, 0) * K1) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * K2) & _M
    return _hash_len16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M,
                       (a + _rot((b + K2) & _M, 18) + c) & _M, mul)


def _len33to64(s: bytes) -> int:
    n = len(s)
    mul = K2 + n * 2
    a = (_fetch64(s, 0) * K2) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _hash_len16(y, (a + _rot((b + K2) & _M, 18) + c) & _M, mul)
    e = (_fetch64(s, 16) * mul) & _M
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & _M
    h = ((z + _fetch64(s, n - 24)) * mul) & _M
    return _hash_len16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
                       (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = (_fetch64(s, i + k) for k in (0, 8, 16, 24))
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def _round(s: bytes, i: int, st: list[int], mul: int, tail: bool) -> None:
    x, y, z, v0, v1, w0, w1 = st
    x = (_rot((x + y + v0 + _fetch64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v1 + _fetch64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w1 * 9) & _M if tail else w1
    y = (y + (v0 * 9 if tail else v0) + _fetch64(s, i + 40)) & _M
    z = (_rot((z + w0) & _M, 33) * mul) & _M
    v0, v1 = _weak32(s, i, (v1 * mul) & _M, (x + w0) & _M)
    w0, w1 = _weak32(s, i + 32, (z + w1) & _M, (y + _fetch64(s, i + 16)) & _M)
    st[:] = [z, y, x, v0, v1, w0, w1]          # swap(z, x)


def fingerprint64(s: bytes) -> int:
    """FarmHash ``Fingerprint64`` of ``s`` (TensorFlow's ``Fingerprint64``)."""
    n = len(s)
    if n <= 16:
        return _len0to16(s)
    if n <= 32:
        return _len17to32(s)
    if n <= 64:
        return _len33to64(s)
    seed = 81
    y = (seed * K1 + 113) & _M
    z = (_shift_mix((y * K2 + 113) & _M) * K2) & _M
    x = (seed * K2 + _fetch64(s, 0)) & _M
    st = [x, y, z, 0, 0, 0, 0]
    end = ((n - 1) // 64) * 64
    for i in range(0, end, 64):
        _round(s, i, st, K1, False)
    x, y, z, v0, v1, w0, w1 = st
    mul = K1 + ((z & 0xFF) << 1)
    last64 = end + ((n - 1) & 63) - 63
    w0 = (w0 + ((n - 1) & 63)) & _M
    v0 = (v0 + w0) & _M
    w0 = (w0 + v0) & _M
    st = [x, y, z, v0, v1, w0, w1]
    _round(s, last64, st, mul, True)
    x, y, z, v0, v1, w0, w1 = st
    return _hash_len16((_hash_len16(v0, w0, mul) + _shift_mix(y) * K0 + z) & _M,
                       (_hash_len16(v1, w1, mul) + x) & _M, mul)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TensorFlow's ``FingerprintCat64``: combines two fingerprints (used by crosses)."""
    k_mul = 0xC6A4A7935BD1E995
    result = fp1 ^ k_mul
    result ^= (_shift_mix((fp2 * k_mul) & _M) * k_mul) & _M
    result = (result * k_mul) & _M
    result = (_shift_mix(result) * k_mul) & _M
    return _shift_mix(result)
