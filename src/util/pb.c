/* pb: the out-of-line parts of the protobuf writer (see pb.h): growth and
 * the length fix-up of nested messages. */
#include "util/pb.h"

#include <errno.h>
#include <stdlib.h>

void pb__free(struct pb *b)
{
	if (!b)
		return;
	free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
}

int pb__grow(struct pb *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *nb;

	if (b->err)
		return b->err;
	if (n > SIZE_MAX / 2 - b->len)
		return b->err = -ENOMEM;
	while (cap - b->len < n)
		cap *= 2;
	nb = realloc(b->buf, cap);
	if (!nb)
		return b->err = -ENOMEM;
	b->buf = nb;
	b->cap = cap;
	return 0;
}

void pb__close_long(struct pb *b, size_t at)
{
	size_t body, k;

	if (b->err || at >= b->len)
		return;
	body = b->len - at - 1;
	if (body < 0x80) {
		b->buf[at] = (uint8_t)body;
		return;
	}
	/* the length needs k > 1 bytes: move the body up by k - 1 */
	k = pb_varint_len(body);
	if (!pb_room(b, k - 1))
		return;
	memmove(b->buf + at + k, b->buf + at + 1, body);
	for (size_t i = 0; i < k; i++, body >>= 7)
		b->buf[at + i] = (uint8_t)((body & 0x7f) | (i + 1 < k ? 0x80 : 0));
	b->len += k - 1;
}
