#!/usr/bin/env python3
"""tools/keys_check.py: recomputes spec/vectors/keys.txt from spec/crypto.md alone, with
Python's `cryptography` package (OpenSSL), independent of the C core.

    python3 tools/keys_check.py [spec/vectors/keys.txt]

Prints one line per checked value and exits non-zero on the first difference."""
import hashlib
import hmac
import re
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey


def hkdf_extract(salt, ikm):
    return hmac.new(salt, ikm, hashlib.sha256).digest()


def hkdf_expand(prk, info, length):
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:length]


def public(secret):
    raw = serialization.Encoding.Raw, serialization.PublicFormat.Raw
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(*raw)


def x25519(secret, peer):
    out = X25519PrivateKey.from_private_bytes(secret).exchange(X25519PublicKey.from_public_bytes(peer))
    assert out != bytes(32), "all-zero X25519 output is refused"
    return out


def fnv1a32(data):
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "spec/vectors/keys.txt"
    given = {}
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, value = (s.strip() for s in line.split("=", 1))
        given[name] = bytes.fromhex(value)

    want = {}
    s_sec, r_sec = given["sender_static_secret"], given["receiver_static_secret"]
    run, reply_run = given["run"], given["reply_run"]
    s_pub, r_pub = public(s_sec), public(r_sec)
    want["sender_static_public"], want["receiver_static_public"] = s_pub, r_pub
    want["sender_key_id"] = fnv1a32(s_pub).to_bytes(4, "big")
    S = x25519(s_sec, r_pub)
    assert S == x25519(r_sec, s_pub)
    want["static_shared"] = S
    e = hkdf_extract(b"pure-link 1", S)
    want["epoch0_secret"] = e

    def keys(e, n):
        u32 = n.to_bytes(4, "big")
        for kind, info in (("data", b"pure-link 1 data" + s_pub + r_pub + run + u32),
                           ("reply", b"pure-link 1 reply" + r_pub + s_pub + run + reply_run + u32)):
            okm = hkdf_expand(e, info, 28)
            want[f"epoch{n}_{kind}_info"] = info
            want[f"epoch{n}_{kind}_key"], iv = okm[:16], okm[16:]
            want[f"epoch{n}_{kind}_iv"] = iv
            for name in given:
                m = re.fullmatch(rf"epoch{n}_{kind}_nonce_pn_(\d+)", name)
                if m:
                    pn = (0).to_bytes(4, "big") + int(m.group(1)).to_bytes(8, "big")
                    want[name] = bytes(a ^ b for a, b in zip(iv, pn))

    keys(e, 0)
    n = 1
    while f"epoch{n}_sender_ephemeral_secret" in given:
        o_sec = given[f"epoch{n}_sender_ephemeral_secret"]
        a_sec = given[f"epoch{n}_receiver_ephemeral_secret"]
        o_pub, a_pub = public(o_sec), public(a_sec)
        dh = x25519(o_sec, a_pub)
        assert dh == x25519(a_sec, o_pub)
        ikm = dh + o_pub + a_pub + n.to_bytes(4, "big")
        want[f"epoch{n}_offer_public"], want[f"epoch{n}_accept_public"] = o_pub, a_pub
        want[f"epoch{n}_dh"], want[f"epoch{n}_ikm"] = dh, ikm
        e = hkdf_extract(e, ikm)
        want[f"epoch{n}_secret"] = e
        keys(e, n)
        n += 1

    inputs = {k for k in given if k.endswith("_secret") and ("static" in k or "ephemeral" in k)}
    inputs |= {"run", "reply_run"}
    bad = 0
    for name, value in given.items():
        if name in inputs:
            continue
        ok = want.get(name) == value
        bad += not ok
        print(("ok  " if ok else "BAD ") + name)
    missing = set(want) - set(given)
    for name in sorted(missing):
        print("MISSING " + name)
    sys.exit(1 if bad or missing else 0)


if __name__ == "__main__":
    main()
