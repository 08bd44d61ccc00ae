/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * linkauth.h -- a link connection's half of authenticated peers (key =,
 * common/auth.h, docs/design.md §11.2): the proof that opens the
 * connection, the tag sealed after every SEND's payload, and the opening of
 * the receiver's sealed acknowledgements (linkack.c asks linkauth_open_ack)
 *
 * Made by the attempt once the receiver's accept proved the key
 * (rpmafs_auth_accept_check): linkauth_new registers the proof's 16 bytes
 * and posts it, without immediate data, as the connection's first SEND,
 * before the loop hears of the connection and so before any message.
 *
 * Sealing: the sending seq is implicit (the receiver counts SENDs), so
 * sends must be sealed in the order they are posted. link.c seals under
 * the caller's lock that orders posts (the spool's, link.h), right before
 * the post. The tag goes in the 16 bytes after the payload in the same
 * registered buffer: a big pool buffer (FUSE_READ_SIZE, 1 MiB + 4 KiB)
 * always has at least 4 KiB after the largest payload (1 MiB), and a small
 * slot has POOL_SMALL_ROOM bytes beyond POOL_SMALL_SIZE (pool.h). A 0-byte
 * message is a 16-byte SEND of its tag alone: its 16 bytes come from
 * linkauth's own region, one slot per send queue entry (link.c).
 *
 * protect = encrypt (asked for, or the receiver's accept says F_ENCRYPT):
 * sealing also encrypts the payload in place in its pool buffer. A message
 * sent again on a later connection (a re-send, docs/design.md §8.6) then
 * holds the ciphertext of the connection that sealed it, so linkpost.c
 * records in the message's struct link_sealed (link.h) what sealed it: this
 * linkauth, kept alive by a reference (linkauth_hold), with the seq and imm. The next post
 * of the message gives it its plaintext back first (linkauth_unseal), then
 * seals it under the new connection's keys. A linkauth is freed when its
 * connection is gone (linkauth_delete) and no message sealed with it is
 * left (linkauth_put). With mac nothing is recorded: the payload
 * never changes.
 */
#ifndef RPMAFS_LINKAUTH_H
#define RPMAFS_LINKAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct rpma_conn;
struct rpma_peer;
struct rpma_mr_local;
struct rpmafs_auth;

/* the wr_id of the proof's SEND (send wr_ids are message numbers, acks have LINKACK_TAG) */
#define LINKAUTH_PROOF_WRID ((1ull << 63) - 1)

struct linkauth {
	struct rpmafs_auth *auth; /* the connection's keys and seqs (owned) */
	bool encrypt;		  /* the payloads are encrypted: seals are recorded */
	unsigned refs;		  /* the connection's, and one per message it encrypted (atomic) */
	struct rpma_mr_local *mr; /* buf, registered for SEND */
	uint8_t *buf; /* [0..16): the proof; then nempty 16-byte tags of 0-byte messages */
	unsigned nempty, next_empty;
};

/*
 * linkauth_new -- take *auth (NULLed), register the proof's buffer and
 * room for nempty 0-byte messages' tags on peer's device, seal the proof
 * and post it on conn (RPMA_F_COMPLETION_ON_ERROR, LINKAUTH_PROOF_WRID).
 * 0 or an rpma error (*auth then freed too).
 */
int linkauth_new(struct rpma_peer *peer, struct rpma_conn *conn, struct rpmafs_auth **auth,
	unsigned nempty, struct linkauth **la_ptr);

/*
 * linkauth_delete -- after the connection is deleted: its buffers go; the
 * keys stay while a message sealed with them holds a reference; *la_ptr =
 * NULL
 */
void linkauth_delete(struct linkauth **la_ptr);

/*
 * linkauth_seal -- seal the SEND of len payload bytes at payload with
 * immediate data imm (0 without): its tag is written at payload + len, and
 * when la->encrypt the payload is encrypted in place. Under the lock that
 * orders the posts, in their order.
 */
void linkauth_seal(struct linkauth *la, uint8_t *payload, uint32_t len, uint32_t imm);

/* linkauth_next_seq -- the seq the next seal takes (to record it: struct link_sealed) */
uint64_t linkauth_next_seq(const struct linkauth *la);

/*
 * linkauth_unseal -- give the len bytes at payload, encrypted by la as SEND
 * seq with imm, their plaintext back (rpmafs_auth_unseal); la's connection
 * may be gone, la must be held (linkauth_hold)
 */
void linkauth_unseal(
	const struct linkauth *la, uint64_t seq, uint32_t imm, uint8_t *payload, uint32_t len);

/* linkauth_hold -- one more reference to la (a message it encrypted); any thread */
void linkauth_hold(struct linkauth *la);

/* linkauth_put -- drop a reference; the last one (after linkauth_delete) frees la; any thread */
void linkauth_put(struct linkauth *la);

/*
 * linkauth_seal_empty -- seal a 0-byte message's SEND (imm as above): its
 * tag goes in the next of linkauth's own slots, whose offset in la->mr is
 * returned (the SEND is 16 bytes from la->mr there)
 */
size_t linkauth_seal_empty(struct linkauth *la, uint32_t imm);

/*
 * linkauth_open_ack -- the received acknowledgement of byte_len bytes at
 * buf: 0 when it is an acknowledgement of *len bytes followed by a good tag
 * (*len set), -1 else (the connection is to be dropped)
 */
int linkauth_open_ack(struct linkauth *la, const uint8_t *buf, uint32_t byte_len, uint32_t *len);

/*
 * linkauth_take -- remove the proof's completion from wc[0..n) (it comes
 * only on an error); returns how many are left, in order; *failed set when
 * the proof's SEND failed (the connection is to be dropped)
 */
int linkauth_take(struct ibv_wc *wc, int n, bool *failed);

#endif /* RPMAFS_LINKAUTH_H */
