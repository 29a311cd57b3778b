/* SPDX-License-Identifier: MIT */
/*
 * libjansson-early.so: a library whose constructor uses jansson before
 * the guard's runs (test_records.c): preloaded after the guard, it is
 * initialised first, and jansson's first object seeds its hashes from
 * /dev/urandom, closing that descriptor with close(), the guard's.
 */
#include <jansson.h>

__attribute__((constructor)) static void jansson_early(void)
{
	json_decref(json_object());
}
