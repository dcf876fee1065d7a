/* SPDX-License-Identifier: MIT */
/*
 * check.c - the byte pattern of soak's messages, and the queue of echoes a
 * connection still expects: every byte that comes back is checked against
 * it, in order.
 */
#include "soak.h"

void fill(uint8_t *p, uint64_t key, size_t len)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = mix(key + (i >> 3));

		memcpy(p + i, &v, 8); /* little-endian: byte k is v >> 8k, as pat() */
	}
	for (; i < len; i++)
		p[i] = pat(key, i);
}

long check(const uint8_t *p, uint64_t key, size_t off, size_t n)
{
	size_t i = 0;

	while (i < n && ((off + i) & 7))
		if (p[i] != pat(key, off + i))
			return (long)i;
		else
			i++;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = mix(key + ((off + i) >> 3)), got;

		memcpy(&got, p + i, 8);
		if (got != v)
			break;
	}
	for (; i < n; i++)
		if (p[i] != pat(key, off + i))
			return (long)i;
	return -1;
}

struct expect *q_back(struct conn *c)
{
	return c->qn ? &c->q[(c->qh + c->qn - 1) % QCAP] : NULL;
}

/* Expect bytes [pos, end) of message (key, seq) back. Push BEFORE sending:
 * a reader task may see the echo before the writer is resumed. */
int expect_push(struct conn *c, uint64_t key, uint32_t seq, uint32_t pos, uint32_t end)
{
	struct expect *b = q_back(c);

	if (b && b->key == key && b->end == pos) {
		b->end = end;
	} else {
		if (c->qn == QCAP)
			return -ENOSPC;
		c->q[(c->qh + c->qn) % QCAP] = (struct expect){key, seq, pos, end};
		c->qn++;
	}
	c->qbytes += end - pos;
	return 0;
}

/* A send of [pos, end) stopped at new_end: forget the rest. */
void expect_trim(struct conn *c, uint32_t old_end, uint32_t new_end)
{
	struct expect *b = q_back(c);

	b->end = new_end;
	c->qbytes -= old_end - new_end;
}

/* Check n received bytes against what is expected. 0, or -1 on a mismatch. */
int consume(struct conn *c, const uint8_t *p, size_t n)
{
	while (n) {
		struct expect *e;
		size_t take;
		long bad;

		while (c->qn && c->q[c->qh].pos == c->q[c->qh].end) {
			c->qh = (c->qh + 1) % QCAP;
			c->qn--;
		}
		if (!c->qn) {
			REPORT("MISMATCH conn %" PRIu64 ": %zu bytes more than were sent\n", c->id,
			       n);
			INC(mismatches);
			c->bad = true;
			return -1;
		}
		e = &c->q[c->qh];
		take = e->end - e->pos < n ? e->end - e->pos : n;
		bad = check(p, e->key, e->pos, take);
		if (bad >= 0) {
			REPORT("MISMATCH conn %" PRIu64 " msg %u offset %" PRIu32
			       ": got 0x%02x, expected 0x%02x\n",
			       c->id, e->seq, e->pos + (uint32_t)bad, p[bad],
			       pat(e->key, e->pos + (size_t)bad));
			INC(mismatches);
			c->bad = true;
			return -1;
		}
		e->pos += (uint32_t)take;
		c->qbytes -= take;
		p += take;
		n -= take;
		ADD(bytes_verified, take);
	}
	return 0;
}

/* One receive, by recv (a pool buffer) or read (our buffer, random length),
 * checked. Returns the count (> 0), 0 at end of stream, -EILSEQ after a
 * mismatch, or the call's -errno. */
