#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# auth_vectors.py -- the known answers of test_auth.c, from implementations
# other than libsodium: Python's hashlib.blake2b (keyed BLAKE2b) and
# OpenSSL's ChaCha20-Poly1305 through python3-cryptography. The test does
# not run this; run it to see where the numbers in test_auth.c come from:
#	/usr/bin/python3 tests/unit/common/auth/auth_vectors.py
import struct
from hashlib import blake2b
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

K = bytes(range(32))                     # the key
NONCE_S = bytes(range(0xa0, 0xb0))
NONCE_R = bytes(range(0xb0, 0xc0))
SESSION = 0x1122334455667788

def b2(out, label, *parts):
    return blake2b(label + b"".join(parts), digest_size=out, key=K).digest()

key_id = b2(16, b"rpmafs key id 1")[:8]

def handshake(req_flags, acc_flags):
    """request (max_message 1 MiB, credits 0, SESSION) and accept (1 MiB, credits 64), the keys"""
    req = b"RPMF" + bytes([3, 56]) + struct.pack("<HIIQ", req_flags, 1 << 20, 0, SESSION)
    req += key_id + NONCE_S
    req += b2(16, b"rpmafs request 1", req)[:8]
    acc = b"RPMF" + bytes([3, 48]) + struct.pack("<HII", acc_flags, 1 << 20, 64) + NONCE_R
    acc += b2(16, b"rpmafs accept 1", req, acc)
    return req, acc, b2(32, b"rpmafs s2r 1", req, acc), b2(32, b"rpmafs r2s 1", req, acc)

def nonce(seq, imm):
    return struct.pack("<QI", seq, imm)

def mac(k, seq, imm, payload):
    # RFC 8439 AEAD, empty plaintext, payload as the additional data
    return ChaCha20Poly1305(k).encrypt(nonce(seq, imm), b"", payload)

MSG = b"hello, receiver"
ACK = b"RPAK" + bytes([1, 16]) + struct.pack("<HIHH", 0, 1, 64, 0)

# mac: F_ACK|F_SESSION|F_AUTH asked, F_ACK|F_AUTH answered
req, acc, s2r, r2s = handshake(0x7, 0x5)
out = [("kat_key_id", key_id), ("kat_req", req), ("kat_acc", acc), ("kat_s2r", s2r),
       ("kat_r2s", r2s),
       ("kat_proof", mac(s2r, 0, 0, b"rpmafs proof 1")),            # s2r seq 0
       ("kat_msg_tag", mac(s2r, 1, 0x80000001, MSG)),                # s2r seq 1, PROMPT | 1
       ("kat_empty_tag", mac(s2r, 2, 2, b"")),                       # s2r seq 2, a 0-byte message 2
       ("kat_ack", ACK), ("kat_ack_tag", mac(r2s, 0, 0, ACK))]       # r2s seq 0
# encrypt: F_ENCRYPT asked and answered
req, acc, s2r, r2s = handshake(0xF, 0xD)
out += [("kat_req_enc", req), ("kat_acc_enc", acc),
        ("kat_sealed", ChaCha20Poly1305(s2r).encrypt(nonce(1, 1), MSG, None)),  # seq 1, imm 1: ct || tag
        ("kat_ack_tag_enc", mac(r2s, 0, 0, ACK))]                  # acks stay mac

def c(name, b):
    print("static const uint8_t %s[%d] = {" % (name, len(b)))
    for i in range(0, len(b), 12):
        print("\t" + " ".join("0x%02x," % x for x in b[i:i + 12]))
    print("};")

for n, v in out:
    c(n, v)
