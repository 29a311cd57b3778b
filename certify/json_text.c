/* SPDX-License-Identifier: MIT */
/*
 * json_text.c - arbitrary bytes and values as JSON strings (json_text.h);
 * UTF-8 is json_out.h's check.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "json_text.h"

json_t *aci_json_text(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	if (j)
		return j;
	char *buf = malloc(3 * n + 1);
	if (!buf)
		return NULL;
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		size_t len = aci_json_out_utf8_len((const unsigned char *)s + i,
						   n - i);
		if (len) {
			memcpy(buf + out, s + i, len);
			out += len;
			i += len;
		} else {
			memcpy(buf + out, "\xEF\xBF\xBD", 3);
			out += 3;
			i++;
		}
	}
	j = json_stringn(buf, out);
	free(buf);
	return j;
}

json_t *aci_json_name(struct ac_bytes b)
{
	return aci_json_text(b.len ? (const char *)b.data : "", b.len);
}

json_t *aci_json_hex_bytes(const uint8_t *p, uint32_t len)
{
	static const char digits[] = "0123456789abcdef";
	char *s = malloc((size_t)len * 2 + 1);
	if (!s)
		return NULL;
	for (uint32_t i = 0; i < len; i++) {
		s[2 * i] = digits[p[i] >> 4];
		s[2 * i + 1] = digits[p[i] & 15];
	}
	json_t *v = json_stringn(s, (size_t)len * 2);
	free(s);
	return v;
}

int aci_json_set_bytes(json_t *obj, const char *key, const char *hex_key,
		       const uint8_t *p, uint32_t len)
{
	json_t *v = json_stringn(len ? (const char *)p : "", len);
	if (v)
		return json_object_set_new(obj, key, v);
	return json_object_set_new(obj, hex_key, aci_json_hex_bytes(p, len));
}

json_t *aci_json_hex_u64(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}
