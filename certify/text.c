/* SPDX-License-Identifier: MIT */
/* The bounded text builder (text.h). */
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "text.h"

void aci_text_put(struct text *t, const char *fmt, ...)
{
	assert(t->used < t->len || t->len == 0);
	if (t->used + 1 >= t->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used += (size_t)n < t->len - t->used ? (size_t)n
							 : t->len - t->used - 1;
	assert(t->used < t->len);
}

void aci_text_range(struct text *t, uint64_t offset, uint64_t size)
{
	if (size > UINT64_MAX - offset)
		aci_text_put(t, "[0x%" PRIx64 ", 2^64)", offset);
	else
		aci_text_put(t, "[0x%" PRIx64 ", 0x%" PRIx64 ")", offset,
			     offset + size);
}

void aci_text_wide(struct text *t, struct ac_wide v)
{
	char buf[48];
	aci_text_put(t, "%s", ac_wide_text(v, buf, sizeof(buf)));
}
